// `stacksage run --sample=...` end to end: the real preload opens the
// samplers in every thread from its trampoline and writes the sampling
// summary next to the event log at exit (docs/sample-file.md).
#include <gtest/gtest.h>

#include <sstream>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <string>

#include "core/formats/sample_summary_schema.hpp"
#include "parsers/node_file_reader.hpp"
#include "tests/integration/traced_run.hpp"

namespace stacksage::testing {
namespace {

// Every page fault, and rings (512 KiB) that hold a whole test's faults,
// so that a busy machine delaying the drain thread loses nothing.
const std::map<std::string, std::string> kEveryFault = {{"STACKSAGE_SAMPLE_PERIOD_PAGEFAULT", "1"},
                                                        {"STACKSAGE_SAMPLE_PAGES", "128"}};

RunResult sampled_run(const TempDir& out, const std::string& sample, std::vector<std::string> command,
                      std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "--sample=" + sample, "-o", out.path().string(), "--"};
    for (auto& c : command) o.argv.push_back(c);
    o.preload = false;
    o.env = std::move(env);
    return run(o);
}

// The one process's event stream and its summary, the stream of the node's
// node.samples linked to it.
struct Recorded {
    fs::path log, summary;
    std::vector<nlohmann::json> events, records;
};

Recorded recorded(const TempDir& out) {
    Recorded r;
    namespace nf = stacksage::formats::node_file;
    const auto lines = [](std::string_view text, std::vector<nlohmann::json>& into) {
        std::istringstream in{std::string(text)};
        for (std::string line; std::getline(in, line);) into.push_back(nlohmann::json::parse(line));
    };
    for (const auto& host : fs::directory_iterator(out.path())) {
        if (!host.is_directory()) continue;
        const fs::path events = host.path() / "node.events", samples = host.path() / "node.samples";
        auto log = stacksage::read_node_file(events.string(), "node.events", nf::FileKind::events);
        if (!log || log->streams.empty()) continue;
        r.log = events;
        lines(log->streams.front().text, r.events);
        auto summary = stacksage::read_node_file(samples.string(), "node.samples", nf::FileKind::samples);
        if (!summary) continue;
        for (const auto& s : summary->streams)
            if (s.of_stream == log->streams.front().stream) {
                r.summary = samples;
                lines(s.text, r.records);
            }
    }
    return r;
}

std::map<std::int64_t, std::uint64_t> page_faults_by_thread(const Recorded& r) {
    std::map<std::int64_t, std::uint64_t> out;
    for (const auto& rec : r.records)
        if (rec["rec"] == "access" && rec["backend"] == "pagefault")
            out[rec["tid"].get<std::int64_t>()] += rec["count"].get<std::uint64_t>();
    return out;
}

std::vector<std::int64_t> worker_tids(const Recorded& r) {
    std::vector<std::int64_t> tids;
    for (const auto& e : r.events)
        if (e["ev"] == "thread_start") tids.push_back(e["tid"].get<std::int64_t>());
    return tids;
}

}  // namespace

TEST(PreloadSampling, SerialFirstTouchShowsInThePageFaultsOfTheFirstThread) {
    TempDir out;
    // Every fault (period 1): 32 MiB are 8192 pages.
    RunResult res = sampled_run(out, "pagefault,cpuclock",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "32"},
                                kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    EXPECT_NE(res.err.find("stacksage run: sampling on"), std::string::npos) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.summary.empty()) << "no sampling summary next to " << r.log;
    ASSERT_FALSE(r.events.empty());
    bool started = false, written = false;
    for (const auto& e : r.events) {
        if (e["ev"] == "sampling") started = e["started"].get<bool>();
        if (e["ev"] == "samples") written = e["ok"].get<bool>() && e["file"] == r.summary.filename().string();
    }
    EXPECT_TRUE(started);
    EXPECT_TRUE(written);
    ASSERT_EQ(r.records.front()["rec"], "sampling");
    EXPECT_EQ(r.records.back()["rec"], "end");

    const std::vector<std::int64_t> workers = worker_tids(r);
    ASSERT_EQ(workers.size(), 2u);
    const auto faults = page_faults_by_thread(r);
    // Thread 0 initialises all 8192 pages; thread 1 only reads. Samples a
    // ring could not hold would be counted as lost, never silently dropped.
    std::map<std::int64_t, std::uint64_t> lost;
    for (const auto& rec : r.records)
        if (rec["rec"] == "thread") lost[rec["tid"].get<std::int64_t>()] = rec["lost"].get<std::uint64_t>();
    std::int64_t toucher = workers[0], reader = workers[1];
    if (faults.count(reader) && (!faults.count(toucher) || faults.at(reader) > faults.at(toucher)))
        std::swap(toucher, reader);  // start order need not be creation order
    EXPECT_GE(faults.at(toucher) + lost[toucher], 8192u);
    EXPECT_GE(faults.at(toucher), 8192u * 95 / 100);
    EXPECT_LT(faults.count(reader) ? faults.at(reader) : 0, 200u) << "a reader faults only on its own stack";
    std::uint64_t ran_on = 0;
    for (const auto& rec : r.records)
        if (rec["rec"] == "ran_on") ran_on += rec["count"].get<std::uint64_t>();
    EXPECT_GT(ran_on, 0u) << "cpu-clock samples say where threads ran";
}

TEST(PreloadSampling, ParallelFirstTouchSpreadsThePageFaults) {
    TempDir out;
    RunResult res = sampled_run(out, "pagefault",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "32", "--parallel-init"},
                                kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    const std::vector<std::int64_t> workers = worker_tids(r);
    ASSERT_EQ(workers.size(), 2u);
    const auto faults = page_faults_by_thread(r);
    std::map<std::int64_t, std::uint64_t> lost;
    for (const auto& rec : r.records)
        if (rec["rec"] == "thread") lost[rec["tid"].get<std::int64_t>()] = rec["lost"].get<std::uint64_t>();
    for (std::int64_t tid : workers) {
        ASSERT_TRUE(faults.count(tid)) << tid;
        EXPECT_GE(faults.at(tid) + lost[tid], 4096u) << "each thread first-touches its half";
        EXPECT_GE(faults.at(tid), 4096u * 95 / 100);
    }
}

TEST(PreloadSampling, OffWritesNothingAndBadListsAreRefused) {
    TempDir out;
    RunResult res = sampled_run(out, "off", {example("memory_first_touch"), "--mib", "4"},
                                {{"STACKSAGE_SAMPLE", "pagefault"}});  // an outer setting must not win
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    EXPECT_TRUE(r.summary.empty());
    for (const auto& e : r.events) EXPECT_NE(e["ev"], "sampling");

    TempDir out2;
    RunResult bad = sampled_run(out2, "pebs,nope", {"/bin/true"});
    EXPECT_EQ(bad.exit_code(), 2);
    EXPECT_NE(bad.err.find("--sample: unknown backend 'nope'"), std::string::npos) << bad.err;
}

TEST(PreloadSampling, UnavailableBackendsAreExplainedAndTheRunGoesOn) {
    TempDir out;
    RunResult res = sampled_run(out, "auto", {example("memory_first_touch"), "--mib", "8"});
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.summary.empty());
    int backends = 0;
    for (const auto& rec : r.records) {
        if (rec["rec"] != "backend") continue;
        ++backends;
        if (!rec["available"].get<bool>()) {
            const std::string reason = rec["reason"];
            EXPECT_GT(reason.size(), 20u) << rec.dump();
            // The same reason reached the user before the run.
            EXPECT_NE(res.err.find(reason), std::string::npos) << reason << "\n" << res.err;
        }
    }
    EXPECT_EQ(backends, 5);
}

// A program whose main thread leaves through pthread_exit ends when its
// last thread does: glibc calls exit(0) in the last thread it knows of. The
// sampler's drain thread is one of them, and it kept such a process alive
// for ever, a zombie main thread and the drain thread polling (found with
// examples/thread_exit under --sample=auto). Now the drain thread ends once
// only the recorder's threads are left, and glibc's exit(0) in it ends the
// process, with everything recorded.
TEST(PreloadSampling, AProgramWhoseMainThreadCallsPthreadExitStillEnds) {
    TempDir out;
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "--sample=pagefault,cpuclock", "-o", out.path().string(), "--",
              example("thread_exit")};
    o.preload = false;
    o.timeout = std::chrono::seconds(20);
    const auto start = std::chrono::steady_clock::now();
    RunResult res = run(o);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    EXPECT_LT(took, std::chrono::seconds(10));
    EXPECT_NE(res.out.find("thread_exit: last thread done"), std::string::npos) << res.out;
    const Recorded r = recorded(out);
    bool sampling = false, process_end = false, model = false;
    for (const auto& e : r.events) {
        sampling = sampling || e["ev"] == "sampling";
        model = model || e["ev"] == "model";
        if (e["ev"] == "process_end") {
            process_end = true;
            EXPECT_EQ(e["status"], 0) << e.dump();
        }
    }
    EXPECT_TRUE(sampling);
    EXPECT_TRUE(process_end);
    EXPECT_TRUE(model);
    EXPECT_FALSE(r.summary.empty());
    // The drain thread is the recorder's: the report counts the application's threads only.
    RunOptions report;
    report.argv = {stacksage_binary(), "report", "--color", "never", out.path().string()};
    report.preload = false;
    RunResult text = run(report);
    ASSERT_EQ(text.exit_code(), 0) << text.err;
    EXPECT_NE(text.out.find("created 3 threads (4 with the main thread"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("stacksage-drain"), std::string::npos) << text.out;
}

// The summary a real run writes holds exactly the schema's records and
// fields (core/formats/sample_summary_schema.hpp), which its reader reads by
// the same names: a field renamed on one side only fails here.
TEST(PreloadSampling, EveryRecordOfARealSummaryHasTheSchemasFields) {
    namespace ss = sample_summary_schema;
    TempDir out;
    RunResult res = sampled_run(out, "pagefault,cpuclock",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "8"}, kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.records.empty()) << "no sampling summary next to " << r.log;
    const std::map<std::string, std::span<const std::string_view>> schema = {
        {ss::sampling::rec, ss::sampling::fields}, {ss::backend::rec, ss::backend::fields},
        {ss::thread::rec, ss::thread::fields},     {ss::ran_on::rec, ss::ran_on::fields},
        {ss::access::rec, ss::access::fields},     {ss::papi::rec, ss::papi::fields},
        {ss::module::rec, ss::module::fields},     {ss::site::rec, ss::site::fields},
        {ss::object::rec, ss::object::fields},     {ss::attribution::rec, ss::attribution::fields},
        {ss::end::rec, ss::end::fields}};
    // Fields a record has only where they apply (an object's site, a site's stack copy).
    const std::map<std::string, std::span<const std::string_view>> optional = {
        {ss::access::rec, ss::access::optional_fields},
        {ss::site::rec, ss::site::optional_fields},
        {ss::object::rec, ss::object::optional_fields}};
    const auto keys_of = [](const nlohmann::json& object) {
        std::set<std::string> keys;
        for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
        return keys;
    };
    const auto names = [](std::span<const std::string_view> fields) {
        return std::set<std::string>(fields.begin(), fields.end());
    };
    std::set<std::string> seen;
    for (const nlohmann::json& record : r.records) {
        ASSERT_EQ(record[ss::common::v], ss::kVersion) << record;
        const std::string rec = record[ss::common::rec];
        ASSERT_TRUE(schema.count(rec)) << "a record the schema lacks: " << record;
        seen.insert(rec);
        std::set<std::string> want = names(schema.at(rec));
        for (std::string_view c : ss::common::fields) want.insert(std::string(c));
        std::set<std::string> have = keys_of(record);
        if (optional.count(rec))
            for (std::string_view o : optional.at(rec)) {
                if (have.count(std::string(o))) seen.insert(rec + "." + std::string(o));
                have.erase(std::string(o));
            }
        EXPECT_EQ(have, want) << record;
        if (rec == ss::sampling::rec) {
            EXPECT_EQ(keys_of(record[ss::sampling::periods]), names(ss::sampling::period::fields)) << record;
        }
    }
    // (ran_on and papi records are checked where they are written: a short
    // run may end before its first cpu-clock sample, and PAPI needs counters.)
    for (const char* rec : {ss::sampling::rec, ss::backend::rec, ss::thread::rec, ss::access::rec, ss::module::rec,
                            ss::site::rec, ss::object::rec, ss::attribution::rec, ss::end::rec})
        EXPECT_TRUE(seen.count(rec)) << "no " << rec << " record in " << r.summary;
    for (const char* field : {"access.site", "access.object", "object.site"})
        EXPECT_TRUE(seen.count(field)) << "no " << field << " in " << r.summary;
}

namespace {

struct Symbol {
    std::uint64_t address = 0, size = 0;
    bool holds(std::uint64_t vaddr) const { return vaddr >= address && vaddr < address + size; }
};

// The program's function symbols, from `nm -S` (the test's way to know
// where each function is; the recorder never runs a program).
std::map<std::string, Symbol> symbols_of(const std::string& program) {
    std::map<std::string, Symbol> out;
    FILE* p = ::popen(("nm -S --defined-only '" + program + "'").c_str(), "r");
    if (p == nullptr) return out;
    char line[512];
    while (std::fgets(line, sizeof line, p) != nullptr) {
        unsigned long long address = 0, size = 0;
        char type = 0, name[400];
        if (std::sscanf(line, "%llx %llx %c %399s", &address, &size, &type, name) == 4) out[name] = {address, size};
    }
    ::pclose(p);
    return out;
}

// A code or data address of the run as an address of the program's file
// (its link-time address), through the module records; 0 when it is not in
// the program.
std::uint64_t program_address(const Recorded& r, const std::string& program, std::uint64_t address) {
    for (const auto& m : r.records)
        if (m["rec"] == "module" && m["path"] == program && address >= m["start"].get<std::uint64_t>() &&
            address < m["end"].get<std::uint64_t>())
            return address - m["start"].get<std::uint64_t>() + m["file_offset"].get<std::uint64_t>();
    return 0;
}

const nlohmann::json* record_with_id(const Recorded& r, const char* rec, std::int64_t id) {
    for (const auto& x : r.records)
        if (x["rec"] == rec && x["id"] == id) return &x;
    return nullptr;
}

// memory_attribution: a malloc'd array first-touched in first_touch_loop,
// a static array in touch_static_table.
void expect_known_sites_and_objects(const std::string& name, const char* unwind) {
    TempDir out;
    const std::string program = example(name);
    RunResult res = sampled_run(out, "pagefault", {program, "--mib", "16"},
                                {{"STACKSAGE_SAMPLE_PERIOD_PAGEFAULT", "4"}, {"STACKSAGE_SAMPLE_PAGES", "256"}});
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.records.empty()) << "no sampling summary next to " << r.log;
    const auto symbols = symbols_of(program);
    ASSERT_TRUE(symbols.count("first_touch_loop") && symbols.count("allocate_array") && symbols.count("main"))
        << "nm found no symbols in " << program;

    // The page faults by site and by object.
    std::map<std::int64_t, std::uint64_t> by_site, by_object;
    std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> by_site_and_object;
    std::uint64_t faults = 0;
    for (const auto& a : r.records) {
        if (a["rec"] != "access" || a["backend"] != "pagefault") continue;
        const std::uint64_t n = a["count"];
        faults += n;
        const std::int64_t site = a.value("site", -1), object = a.value("object", -1);
        by_site[site] += n;
        by_object[object] += n;
        by_site_and_object[{site, object}] += n;
    }
    ASSERT_GT(faults, 500u) << "16 MiB + 8 MiB first touched, every 4th fault (some may be lost on a busy machine)";

    // The malloc'd block: a heap object whose site returns into allocate_array.
    const nlohmann::json* heap = nullptr;
    for (const auto& o : r.records)
        if (o["rec"] == "object" && o["kind"] == "heap" && o["bytes"] == 16u << 20) heap = &o;
    ASSERT_NE(heap, nullptr) << "no heap object of 16 MiB in " << r.summary;
    EXPECT_EQ((*heap)["blocks"], 1);
    const nlohmann::json* allocated_at = record_with_id(r, "site", (*heap)["site"].get<std::int64_t>());
    ASSERT_NE(allocated_at, nullptr);
    const std::uint64_t return_address = program_address(r, program, (*allocated_at)["ip"]);
    EXPECT_TRUE(symbols.at("allocate_array").holds(return_address - 1))
        << "allocated at " << *allocated_at << ", allocate_array at " << symbols.at("allocate_array").address;

    // Most faults in that block come from one site, inside first_touch_loop.
    const std::int64_t heap_id = (*heap)["id"];
    ASSERT_GT(by_object[heap_id], faults / 2) << "16 of the 24 MiB touched are the block's";
    std::int64_t touching = -1;
    std::uint64_t most = 0;
    for (const auto& [key, n] : by_site_and_object)
        if (key.second == heap_id && n > most) {
            most = n;
            touching = key.first;
        }
    const nlohmann::json* site = record_with_id(r, "site", touching);
    ASSERT_NE(site, nullptr) << "the block's faults have no site";
    EXPECT_GT(most, by_object[heap_id] * 9 / 10);
    EXPECT_TRUE(symbols.at("first_touch_loop").holds(program_address(r, program, (*site)["ip"])))
        << "the touching site " << *site << " is not in first_touch_loop";
    EXPECT_EQ((*site)["unwind"], unwind) << *site;
    if (std::string(unwind) == "callchain") {
        // The caller of the leaf loop, then __libc_start_call_main.
        ASSERT_FALSE((*site)["frames"].empty());
        EXPECT_TRUE(symbols.at("main").holds(program_address(r, program, (*site)["frames"][0].get<std::uint64_t>() - 1)))
            << *site;
        EXPECT_FALSE(site->contains("stack"));
    } else {
        ASSERT_TRUE(site->contains("stack") && site->contains("regs")) << "no stack copy to unwind: " << *site;
        EXPECT_GE((*site)["stack"].get<std::string>().size(), 2u * 64) << "a copy of the user stack, in hex";
        EXPECT_EQ((*site)["regs"]["ip"], (*site)["ip"]);
    }

    // The static array: one static object, the variable g_static_table
    // (its module and offset lead to the symbol's address).
    std::uint64_t base = 0;
    for (const auto& m : r.records)
        if (m["rec"] == "module" && m["path"] == program && m["file_offset"] == 0) base = m["start"];
    ASSERT_NE(base, 0u);
    ASSERT_TRUE(symbols.count("g_static_table"));
    std::set<std::int64_t> static_objects;
    std::uint64_t static_faults = 0;
    for (const auto& [object, n] : by_object) {
        const nlohmann::json* o = record_with_id(r, "object", object);
        if (o == nullptr || (*o)["kind"] != "static") continue;
        const nlohmann::json* m = record_with_id(r, "module", (*o)["module"].get<std::int64_t>());
        ASSERT_NE(m, nullptr);
        EXPECT_EQ((*m)["path"], program);
        const std::uint64_t runtime =
            (*m)["start"].get<std::uint64_t>() + ((*o)["offset"].get<std::uint64_t>() - (*m)["file_offset"].get<std::uint64_t>());
        EXPECT_EQ(runtime - base, symbols.at("g_static_table").address) << *o << " is not g_static_table";
        static_objects.insert(object);
        static_faults += n;
    }
    EXPECT_EQ(static_objects.size(), 1u) << "one object for all the array's pages";
    EXPECT_GT(static_faults, faults / 5) << "8 of the 24 MiB touched are the static array's";

    // The program's modules carry its build id.
    bool program_module = false;
    for (const auto& m : r.records)
        if (m["rec"] == "module" && m["path"] == program && m["executable"] == true) {
            program_module = true;
            EXPECT_EQ(m["build_id"].get<std::string>().size(), 40u) << m;
        }
    EXPECT_TRUE(program_module);
    // The recorder's own files (its logs) are not modules of the application.
    for (const auto& m : r.records) {
        if (m["rec"] == "module") {
            EXPECT_EQ(m["path"].get<std::string>().find(out.path().string()), std::string::npos) << m;
        }
    }
    const nlohmann::json* attribution = nullptr;
    for (const auto& x : r.records)
        if (x["rec"] == "attribution") attribution = &x;
    ASSERT_NE(attribution, nullptr);
    EXPECT_GE((*attribution)["allocations_tracked"], 1);
    EXPECT_EQ((*attribution)["min_block_bytes"], 1u << 20);
}

}  // namespace

// Built with frame pointers: the kernel's chain is the call path.
TEST(PreloadSampling, CallSitesAndObjectsOfAKnownFirstTouchWithFramePointers) {
    expect_known_sites_and_objects("memory_attribution_fp", "callchain");
}

// Built without: the chain stops at once, and the site keeps a stack copy.
TEST(PreloadSampling, CallSitesAndObjectsOfAKnownFirstTouchWithoutFramePointers) {
    expect_known_sites_and_objects("memory_attribution_nofp", "stack");
}

// The allocation interposers keep glibc's semantics (the example checks
// them as it goes, from 4 threads) and track every large block.
TEST(PreloadSampling, InterposedAllocationsKeepTheirSemanticsAndLargeBlocksAreTracked) {
    TempDir out;
    RunResult res = sampled_run(out, "pagefault", {example("allocation_cases"), "--threads", "4", "--rounds", "50"});
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    EXPECT_NE(res.out.find("large blocks 1400"), std::string::npos) << res.out;
    const Recorded r = recorded(out);
    const nlohmann::json* attribution = nullptr;
    std::set<std::string> kinds;
    for (const auto& x : r.records) {
        if (x["rec"] == "attribution") attribution = &x;
        if (x["rec"] == "object") kinds.insert(x["kind"].get<std::string>());
    }
    ASSERT_NE(attribution, nullptr) << "no attribution line in " << r.summary;
    EXPECT_EQ((*attribution)["allocations_tracked"], 1400) << *attribution;
    EXPECT_EQ((*attribution)["objects_dropped"], 0);
    EXPECT_TRUE(kinds.count("heap") && kinds.count("mmap")) << "malloc'd and mmap'd blocks";

    // Attribution off: the same program, nothing tracked, no attribution line.
    TempDir off;
    RunResult plain = sampled_run(off, "pagefault", {example("allocation_cases"), "--threads", "2", "--rounds", "10"},
                                  {{"STACKSAGE_SAMPLE_ATTRIBUTION", "0"}});
    ASSERT_EQ(plain.exit_code(), 0) << plain.err;
    for (const auto& x : recorded(off).records) EXPECT_NE(x["rec"], "attribution");
}

// Programs on another allocator (examples/foreign_allocator.c): every block
// the interposers hand out is that allocator's own (its size query, its free
// and its statistics agree), with sampling off and on, and large blocks are
// still tracked as heap objects that the page faults land in, the
// allocator's own mappings not.
void expect_foreign_allocator_works(const std::string& program, std::map<std::string, std::string> env) {
    for (const std::string sample : {"", "pagefault"}) {
        SCOPED_TRACE(program + (sample.empty() ? ", sampling off" : ", --sample=" + sample));
        TempDir out;
        RunOptions o;
        o.argv = {stacksage_binary(), "run", "-o", out.path().string()};
        if (!sample.empty()) o.argv.push_back("--sample=" + sample);
        for (const char* a : {"--", program.c_str(), "--threads", "4", "--rounds", "50"}) o.argv.push_back(a);
        o.preload = false;
        o.env = env;
        RunResult res = run(o);
        ASSERT_EQ(res.exit_code(), 0) << res.err;
        EXPECT_NE(res.out.find("large blocks 1001"), std::string::npos) << res.out;
        if (sample.empty()) continue;

        const Recorded r = recorded(out);
        const nlohmann::json* attribution = nullptr;
        std::set<std::int64_t> heap_objects;
        std::uint64_t heap_blocks = 0, heap_faults = 0;
        for (const auto& x : r.records) {
            if (x["rec"] == "attribution") attribution = &x;
            // The program maps nothing itself: the allocator's own mappings (jemalloc's
            // extents) are its bookkeeping, not data objects.
            if (x["rec"] == "object") {
                EXPECT_NE(x["kind"], "mmap") << x;
            }
            if (x["rec"] == "object" && x["kind"] == "heap") {
                heap_objects.insert(x["id"].get<std::int64_t>());
                heap_blocks += x["blocks"].get<std::uint64_t>();
            }
        }
        for (const auto& a : r.records)
            if (a["rec"] == "access" && a["backend"] == "pagefault" && heap_objects.count(a.value("object", -1)))
                heap_faults += a["count"].get<std::uint64_t>();
        ASSERT_NE(attribution, nullptr) << "no attribution line in " << r.summary;
        EXPECT_EQ((*attribution)["objects_dropped"], 0) << *attribution;
        // The five large blocks of each round and the probe: every one tracked.
        EXPECT_EQ(heap_blocks, 1001u) << *attribution;
        EXPECT_GT(heap_faults, 0u) << "no page fault in a tracked heap block";
    }
}

#ifdef STACKSAGE_HAVE_JEMALLOC_EXAMPLE
TEST(PreloadSampling, ProgramsLinkedAgainstJemallocGetJemallocsBlocks) {
    expect_foreign_allocator_works(example("foreign_allocator_jemalloc"), {});
}
#endif

#ifdef STACKSAGE_TCMALLOC
// tcmalloc after the recorder in LD_PRELOAD (`stacksage run` puts its own first).
TEST(PreloadSampling, ProgramsWithTcmallocPreloadedAfterTheRecorderGetTcmallocsBlocks) {
    expect_foreign_allocator_works(example("foreign_allocator"), {{"LD_PRELOAD", STACKSAGE_TCMALLOC}});
}
#endif

}  // namespace stacksage::testing
