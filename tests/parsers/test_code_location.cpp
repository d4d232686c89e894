// parsers/code_location/: stack copies of a real program of known shape
// (code_location/known_shape.c, built with and without frame pointers and
// -g, and stripped) unwound with libunwind's remote interface and symbolized
// with libdwfl after the program ended; the known functions and lines must
// come back, and what cannot be resolved must say why.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "parsers/code_location/attribution_resolver.hpp"
#include "parsers/code_location/code_location.hpp"
#include "parsers/code_location/module_file.hpp"
#include "parsers/code_location/process_address_space.hpp"
#include "parsers/code_location/stack_unwinder.hpp"
#include "parsers/code_location/symbolizer.hpp"

namespace stacksage {
namespace {

// What a run of known_shape wrote: its site (registers and stack copy), its
// mappings as the recorder would record them, and the address of `sink`.
struct Capture {
    SampledSite site;
    std::vector<SampledModule> modules;
    std::uint64_t sink = 0;
    std::string program;
    std::vector<std::uint64_t> kernel_chain;  // perf: the kernel's frame-pointer chain, context markers left out
    bool refused = false;                     // perf: the kernel refused the event
};

std::vector<std::uint8_t> from_hex(const std::string& hex) {
    std::vector<std::uint8_t> out(hex.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
    return out;
}

// A /proc/<pid>/maps line as a module record, kinds as the recorder gives them.
std::optional<SampledModule> module_of_maps_line(const std::string& line, std::int64_t id) {
    std::istringstream in(line);
    std::string range, perms, offset, dev, inode, path;
    in >> range >> perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, path);
    SampledModule m;
    m.id = id;
    const std::size_t dash = range.find('-');
    m.start = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.file_offset = std::stoull(offset, nullptr, 16);
    m.executable = perms.size() > 2 && perms[2] == 'x';
    if (path == "[vdso]") {
        m.kind = "vdso";
    } else if (!path.empty() && path[0] == '/') {
        m.kind = "file";
        m.path = path;
        m.build_id = ModuleFile::open(path, "")->build_id();
    } else if (path.empty() && m.executable) {
        m.kind = "anon_exec";
    } else {
        return std::nullopt;  // [stack], [heap], anonymous data: no code, no statics
    }
    return m;
}

// mode "perf": the kernel's sample of a page fault instead of the program's own copy.
Capture run_known_shape(const std::string& variant, std::size_t stack_limit = std::size_t{1} << 20,
                        const std::string& mode = "copy") {
    Capture c;
    c.program = std::string(KNOWN_SHAPE_DIR) + "/known_shape_" + variant;
    const std::string out = "/tmp/unit_code_location_" + variant + "_" + std::to_string(getpid()) + ".txt";
    const std::string command = c.program + " " + out + " " + std::to_string(stack_limit) + " " + mode;
    const int status = std::system(command.c_str());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
        c.refused = true;
        return c;
    }
    EXPECT_EQ(status, 0) << command;
    std::ifstream in(out);
    std::string line, word;
    std::int64_t id = 0;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        fields >> word;
        if (word == "sink") {
            fields >> std::hex >> c.sink;
        } else if (word == "regs") {
            fields >> std::hex >> c.site.reg_ip >> c.site.reg_sp >> c.site.reg_bp;
        } else if (word == "stack") {
            std::string hex;
            fields >> hex;
            c.site.stack = from_hex(hex);
        } else if (word == "chain") {
            std::string hex;
            while (fields >> hex) {
                const std::uint64_t a = std::stoull(hex, nullptr, 16);
                if (a < 0xffffffffffff0000ull) c.kernel_chain.push_back(a);  // PERF_CONTEXT_* markers are near -1
            }
        } else if (word == "sample_ip") {
            continue;
        } else if (auto m = module_of_maps_line(line, id)) {
            c.modules.push_back(*m);
            ++id;
        }
    }
    std::remove(out.c_str());
    c.site.id = 0;
    c.site.ip = c.site.reg_ip;
    c.site.unwind = "stack";
    c.site.samples = 5;
    return c;
}

// The line of known_shape.c marked "LINE:<name>".
int marked_line(const std::string& name) {
    std::ifstream in(KNOWN_SHAPE_SOURCE);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n)
        if (line.find("LINE:" + name + " ") != std::string::npos) return n;
    return -1;
}

struct Unwound {
    UnwoundStack stack;
    std::vector<CodeLocation> frames;
};

Unwound unwind_and_symbolize(const Capture& c) {
    ProcessAddressSpace space(c.modules);
    ModuleFiles files;
    StackUnwinder unwinder(space, files);
    ModuleSymbolTables tables;
    Symbolizer symbols(space, files, tables);
    Unwound u;
    u.stack = unwinder.unwind(c.site);
    for (std::size_t i = 0; i < u.stack.frames.size(); ++i) u.frames.push_back(symbols.code(u.stack.frames[i], i > 0));
    return u;
}

class KnownShape : public ::testing::TestWithParam<std::string> {};

TEST_P(KnownShape, UnwindsTheCopiedStackToMainThroughTheKnownFunctions) {
    const Capture c = run_known_shape(GetParam());
    ASSERT_FALSE(c.site.stack.empty());
    const Unwound u = unwind_and_symbolize(c);
    EXPECT_EQ(u.stack.outcome, UnwindOutcome::Complete);
    ASSERT_GE(u.frames.size(), 5u);  // copy_stack, inner_touch, outer_loop, main, libc's caller of main
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(u.frames[i].module, c.program) << i;
    EXPECT_NE(u.frames[4].module, c.program);

    const bool stripped = GetParam() == "nofp_stripped";
    const bool with_lines = GetParam().find("_g") != std::string::npos;
    const char* names[] = {"copy_stack", "inner_touch", "outer_loop", "main"};
    for (std::size_t i = 0; i < 4; ++i) {
        const CodeLocation& f = u.frames[i];
        if (stripped) {
            EXPECT_EQ(f.function, "") << i;
            EXPECT_EQ(f.gap, CodeGap::Stripped) << i;
            EXPECT_EQ(f.label().rfind("known_shape_nofp_stripped+0x", 0), 0u) << f.label();
            continue;
        }
        EXPECT_EQ(f.function, names[i]) << i;
        if (with_lines) {
            EXPECT_EQ(f.gap, CodeGap::None) << i;
            EXPECT_EQ(base_name(f.file), "known_shape.c") << i;
        } else {
            EXPECT_EQ(f.gap, CodeGap::NoLineInfo) << i;
            EXPECT_EQ(f.line, 0) << i;
            EXPECT_EQ(f.label(), std::string(names[i]) + " in known_shape_" + GetParam());
        }
    }
    if (with_lines) {
        // The callers' lines are those of their calls (return address - 1).
        EXPECT_EQ(u.frames[1].line, marked_line("inner_touch"));
        EXPECT_EQ(u.frames[2].line, marked_line("outer_loop"));
        EXPECT_EQ(u.frames[3].line, marked_line("main"));
        EXPECT_EQ(u.frames[2].label(), "outer_loop (known_shape.c:" + std::to_string(marked_line("outer_loop")) + ")");
    }
}

INSTANTIATE_TEST_SUITE_P(Builds, KnownShape, ::testing::Values("fp_g", "nofp_g", "fp_nog", "nofp_stripped"));

// The kernel's own sample of a first touch (a software page-fault event with
// the user registers and stack, as the recorder opens it), unwound after the
// program ended: the faulting store's line, then its callers.
TEST_P(KnownShape, UnwindsTheKernelsStackCopyOfAPageFault) {
    const Capture c = run_known_shape(GetParam(), 0, "perf");
    if (c.refused) GTEST_SKIP() << "the kernel refused a software page-fault event (perf_event_paranoid)";
    ASSERT_FALSE(c.site.stack.empty());
    const Unwound u = unwind_and_symbolize(c);
    EXPECT_EQ(u.stack.outcome, UnwindOutcome::Complete);
    ASSERT_GE(u.frames.size(), 4u);
    const char* names[] = {"inner_touch", "outer_loop", "main"};
    const int lines[] = {marked_line("first_touch"), marked_line("outer_loop"), marked_line("main")};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(u.frames[i].module, c.program) << i;
        if (GetParam() == "nofp_stripped") continue;
        EXPECT_EQ(u.frames[i].function, names[i]) << i;
        if (GetParam().find("_g") != std::string::npos) {
            EXPECT_EQ(u.frames[i].line, lines[i]) << i;
        }
    }
    // With frame pointers, the kernel's chain is the same path (unwind "callchain").
    if (GetParam().rfind("fp_", 0) == 0) {
        ASSERT_GE(c.kernel_chain.size(), 4u);
        EXPECT_EQ(c.kernel_chain[0], c.site.reg_ip);
        for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(c.kernel_chain[i], u.stack.frames[i]) << i;
        // Resolved as a "callchain" site, in the kernel's own form (marker, ip, callers): the same sites.
        SampleSummary s;
        s.modules = c.modules;
        SampledSite chain;
        chain.id = 0;
        chain.ip = c.site.reg_ip;
        chain.unwind = "callchain";
        chain.frames = {0xfffffffffffffe00ull};  // PERF_CONTEXT_USER
        chain.frames.insert(chain.frames.end(), c.kernel_chain.begin(), c.kernel_chain.end());
        s.sites.push_back(chain);
        const AttributionResolver r(s);
        ASSERT_GE(r.site(0)->call_path.size(), 3u);
        for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(r.site(0)->call_path[i].function, names[i]) << i;
    }
}

TEST(StackUnwinder, AShortStackCopyEndsWithStackCopyEndAndKeepsTheFramesItHas) {
    const Capture c = run_known_shape("nofp_g", 96);
    ASSERT_EQ(c.site.stack.size(), 96u);
    const Unwound u = unwind_and_symbolize(c);
    EXPECT_EQ(u.stack.outcome, UnwindOutcome::StackCopyEnd);
    EXPECT_TRUE(is_unwind_failure(u.stack.outcome));
    ASSERT_GE(u.frames.size(), 1u);
    EXPECT_EQ(u.frames[0].function, "copy_stack");
    EXPECT_LT(u.frames.size(), 4u);  // main is not reached, and not guessed
}

TEST(StackUnwinder, ASiteWithoutAStackCopyIsNoStack) {
    Capture c = run_known_shape("fp_g");
    c.site.stack.clear();
    EXPECT_EQ(unwind_and_symbolize(c).stack.outcome, UnwindOutcome::NoStack);
}

TEST(Symbolizer, AnotherBuildAtTheModulesPathGivesModuleAndOffsetOnly) {
    Capture c = run_known_shape("fp_g");
    for (SampledModule& m : c.modules)
        if (m.path == c.program) m.build_id = "00112233445566778899aabbccddeeff00112233";
    ProcessAddressSpace space(c.modules);
    ModuleFiles files;
    ModuleSymbolTables tables;
    Symbolizer symbols(space, files, tables);
    const CodeLocation& l = symbols.code(c.site.reg_ip);
    EXPECT_EQ(l.gap, CodeGap::BuildIdMismatch);
    EXPECT_EQ(l.function, "");
    EXPECT_EQ(l.label().rfind("known_shape_fp_g+0x", 0), 0u) << l.label();
}

TEST(Symbolizer, AMissingFileGivesNoFile) {
    Capture c = run_known_shape("fp_g");
    for (SampledModule& m : c.modules)
        if (m.path == c.program) m.path = "/nonexistent/known_shape";
    ProcessAddressSpace space(c.modules);
    ModuleFiles files;
    ModuleSymbolTables tables;
    Symbolizer symbols(space, files, tables);
    const CodeLocation& l = symbols.code(c.site.reg_ip);
    EXPECT_EQ(l.gap, CodeGap::NoFile);
    EXPECT_EQ(l.label().rfind("known_shape+0x", 0), 0u) << l.label();
}

TEST(ModuleFile, AFifoADirectoryAndATextFileAreNoFileWithTheReason) {
    const std::string fifo = "/tmp/unit_code_location_fifo_" + std::to_string(getpid());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const auto f = ModuleFile::open(fifo, "");  // must not wait for a writer
    EXPECT_EQ(f->gap(), CodeGap::NoFile);
    EXPECT_NE(f->why().find("not a regular ELF file"), std::string::npos) << f->why();
    std::remove(fifo.c_str());
    EXPECT_EQ(ModuleFile::open("/tmp", "")->gap(), CodeGap::NoFile);
    EXPECT_EQ(ModuleFile::open(KNOWN_SHAPE_SOURCE, "")->gap(), CodeGap::NoFile);
    EXPECT_NE(ModuleFile::open(KNOWN_SHAPE_SOURCE, "")->why().find("not an ELF file"), std::string::npos);
    EXPECT_NE(ModuleFile::open("/nonexistent/app", "")->why().find("No such file"), std::string::npos);
}

TEST(Symbolizer, VdsoJitUnreadableAndUnmappedAddressesSayWhy) {
    std::vector<SampledModule> modules(3);
    modules[0] = {0, "", 0x1000, 0x2000, 0, "", "vdso", true};
    modules[1] = {1, "", 0x10000, 0x20000, 0, "", "anon_exec", true};
    modules[2] = {2, "/opt/app/lib.so", 0x30000, 0x40000, 0x2000, "", "unreadable", true};
    ProcessAddressSpace space(modules);
    ModuleFiles files;
    ModuleSymbolTables tables;
    Symbolizer symbols(space, files, tables);
    EXPECT_EQ(symbols.code(0x1800).gap, CodeGap::Vdso);
    EXPECT_EQ(symbols.code(0x1800).label(), "[vdso]+0x800");
    EXPECT_EQ(symbols.code(0x10040).gap, CodeGap::AnonExec);
    EXPECT_EQ(symbols.code(0x10040).label(), "[anon]+0x40");
    EXPECT_EQ(symbols.code(0x30010).gap, CodeGap::UnreadableMapping);
    EXPECT_EQ(symbols.code(0x30010).label(), "lib.so+0x2010");
    EXPECT_EQ(symbols.code(0x50000).gap, CodeGap::NoModule);
    EXPECT_EQ(symbols.code(0x50000).label(), "0x50000");
    EXPECT_NE(explain(CodeGap::Stripped).find("stripped"), std::string_view::npos);
}

TEST(ProcessAddressSpace, FindsTheMappingAndItsFileOffsetTheLaterRecordWinning) {
    std::vector<SampledModule> modules(3);
    modules[0] = {0, "/a", 0x1000, 0x3000, 0x0, "", "file", true};
    modules[1] = {1, "/b", 0x5000, 0x6000, 0x4000, "", "file", true};
    modules[2] = {2, "/c", 0x2000, 0x3000, 0x0, "", "file", true};  // replaced part of /a
    const ProcessAddressSpace space(modules);
    EXPECT_EQ(space.locate(0x1800)->module->path, "/a");
    EXPECT_EQ(space.locate(0x1800)->file_offset, 0x800u);
    EXPECT_EQ(space.locate(0x2800)->module->path, "/c");
    EXPECT_EQ(space.locate(0x5010)->file_offset, 0x4010u);
    EXPECT_FALSE(space.locate(0x3000).has_value());
    EXPECT_FALSE(space.locate(0x10).has_value());
    EXPECT_EQ(space.module_by_id(1)->path, "/b");
    EXPECT_EQ(space.module_by_id(9), nullptr);
}

// A summary as the recorder writes it, around the captured site: the site,
// a heap block allocated there, the static `sink`, a thread's stack; and
// accesses of two threads, one of them through a site whose copy is short.
TEST(AttributionResolver, LabelsSitesAndObjectsAndCountsCutCallPathsPerThread) {
    const Capture full = run_known_shape("fp_g");
    SampleSummary s;
    s.pid = 42;
    s.modules = full.modules;
    s.sites.push_back(full.site);
    // The same sample with only its first 96 bytes of stack copied.
    SampledSite cut = full.site;
    cut.id = 1;
    cut.stack.resize(96);
    s.sites.push_back(cut);

    const ProcessAddressSpace space(full.modules);  // sink points into it
    const std::optional<ModuleAddress> sink = space.locate(full.sink);
    ASSERT_TRUE(sink.has_value());
    s.objects.push_back({0, "heap", 0, -1, 0, 0, 1, 80u << 20});
    s.objects.push_back({1, "static", -1, sink->module->id, sink->file_offset, 0, 0, 0});
    s.objects.push_back({2, "stack", -1, -1, 0, 1234, 0, 0});
    SampledAccess a;
    a.tid = 7;
    a.backend = "pagefault";
    a.count = 10;
    a.site = 0;
    a.object = 0;
    s.accesses.push_back(a);
    a.tid = 8;
    a.count = 4;
    a.site = 1;
    s.accesses.push_back(a);
    s.attribution.present = true;

    const AttributionResolver r(s);
    const ResolvedSite* site = r.site(0);
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->outcome, UnwindOutcome::Complete);
    EXPECT_EQ(site->site().function, "copy_stack");
    const std::string path = site->call_path_text(4);
    EXPECT_EQ(path.find("copy_stack (known_shape.c:"), 0u) << path;
    EXPECT_NE(path.find(" < inner_touch (known_shape.c:" + std::to_string(marked_line("inner_touch")) + ")"),
              std::string::npos)
        << path;
    EXPECT_NE(path.find(" < ..."), std::string::npos) << path;
    EXPECT_EQ(r.site(1)->outcome, UnwindOutcome::StackCopyEnd);
    EXPECT_EQ(r.site(5), nullptr);

    const std::string heap = r.object(0)->label;
    EXPECT_EQ(heap.rfind("heap block of 80 MiB allocated at known_shape.c:", 0), 0u) << heap;
    EXPECT_NE(heap.find(" in copy_stack"), std::string::npos) << heap;
    EXPECT_EQ(r.object(1)->label, "static `sink` in known_shape_fp_g");
    EXPECT_EQ(r.object(1)->name, "`sink`");
    EXPECT_EQ(r.object(2)->label, "stack of thread 1234");

    const std::vector<std::string> notes = r.notes();
    bool thread_8 = false;
    for (const std::string& n : notes) {
        EXPECT_EQ(n.find("thread 7:"), std::string::npos) << n;  // its path was complete
        if (n.rfind("thread 8: the call paths of 4 of its 4 sampled accesses could not be unwound", 0) == 0 &&
            n.find("stack_copy_end 4") != std::string::npos)
            thread_8 = true;
    }
    EXPECT_TRUE(thread_8) << ::testing::PrintToString(notes);
    EXPECT_EQ(r.unwind_failures().at(UnwindOutcome::StackCopyEnd), 1u);
}

TEST(AttributionResolver, FramesOfAStrippedUserModuleAreNoted) {
    const Capture c = run_known_shape("nofp_stripped");
    SampleSummary s;
    s.modules = c.modules;
    s.sites.push_back(c.site);
    const AttributionResolver r(s);
    ASSERT_GE(r.frame_gaps().count(CodeGap::Stripped), 1u);
    bool noted = false;
    for (const std::string& n : r.notes())
        if (n.find("in known_shape_nofp_stripped: the module is stripped") != std::string::npos) noted = true;
    EXPECT_TRUE(noted) << ::testing::PrintToString(r.notes());
}

}  // namespace
}  // namespace stacksage

namespace stacksage {
namespace {

// Two processes of one program (a PIE: ASLR maps it elsewhere each time)
// resolved with one shared cache: each gets its own addresses right.
TEST(AttributionResolver, ProcessesOfOneProgramShareItsFilesAndSymbols) {
    const Capture a = run_known_shape("nofp_g"), b = run_known_shape("nofp_g");
    CodeFilesCache shared;
    for (const Capture* c : {&a, &b}) {
        SampleSummary s;
        s.modules = c->modules;
        s.sites.push_back(c->site);
        const AttributionResolver r(s, &shared);
        const ResolvedSite* site = r.site(0);
        ASSERT_NE(site, nullptr);
        EXPECT_EQ(site->outcome, UnwindOutcome::Complete);
        ASSERT_GE(site->call_path.size(), 4u);
        EXPECT_EQ(site->call_path[2].label(), "outer_loop (known_shape.c:" + std::to_string(marked_line("outer_loop")) + ")");
        EXPECT_EQ(site->call_path[3].function, "main");
    }
    if (a.site.reg_ip == b.site.reg_ip)
        std::cout << "note: address-space randomization is off here: the two processes had one layout\n";
}

}  // namespace
}  // namespace stacksage
