// Signals and descriptors the application owns: dispositions set through
// every libc function that sets one (in strict C11, where signal() is
// __sysv_signal), read back, chained to, and left by siglongjmp; descriptor
// numbers the recorder used or uses, taken by the application (standard
// error closed, every descriptor closed as daemons do, then reused for the
// application's own directories and files).
//
// Each case runs the program with and without the recorder: the application
// must see the same (its output and exit status), its files must hold what it
// wrote, and the recording must be complete.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "core/formats/run_layout.hpp"
#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool has_recorder_message(const std::string& err) {
    return err.rfind("stacksage: ", 0) == 0 || err.find("\nstacksage: ") != std::string::npos;
}

RunResult run_example(const std::string& program, const std::vector<std::string>& args,
                      const std::optional<fs::path>& output, std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = {example(program)};
    for (const auto& a : args) o.argv.push_back(a);
    o.preload = output.has_value();
    o.output = output;
    o.env = std::move(env);
    return run(o);
}

// The same run with and without the recorder: same status, same output.
struct Compared {
    RunResult plain;
    RunResult traced;
    std::vector<ProcessLog> logs;
};

Compared run_both(const std::string& program, const std::vector<std::string>& plain_args,
                  const std::vector<std::string>& traced_args, const TempDir& out,
                  const std::map<std::string, std::string>& traced_env = {}) {
    Compared c;
    c.plain = run_example(program, plain_args, std::nullopt);
    c.traced = run_example(program, traced_args, out.path(), traced_env);
    EXPECT_EQ(c.traced.wait_status, c.plain.wait_status) << c.traced.out << c.traced.err;
    EXPECT_EQ(c.traced.out, c.plain.out);
    EXPECT_FALSE(has_recorder_message(c.traced.err)) << c.traced.err;
    // The event logs (a sampled run adds its summaries, *.samples.jsonl).
    for (auto& log : read_logs(out.path()))
        if (!log.file.string().ends_with(formats::run_layout::kSamplesSuffix)) c.logs.push_back(std::move(log));
    for (const auto& log : c.logs) {
        expect_well_formed(log);
        expect_complete(log);
    }
    return c;
}

Compared run_both(const std::string& program, const std::vector<std::string>& args, const TempDir& out) {
    return run_both(program, args, args, out);
}

// ---------------------------------------------------------------------------
// Signal dispositions

// The application's SIGTERM handler is set by each flavour of signal() that
// libc has (strict C's signal() is __sysv_signal, which went around the
// recorder); a library then installs its own with sigaction and chains to
// the previous one. Without the recorder the chain reaches the application's
// handler (exit 7); the recorder once answered SIG_DFL (the library re-raised:
// death by SIGTERM, 143 in a shell).
TEST(PreloadOwned, EverySignalSetterKeepsTheHandlerALibraryChainsTo) {
    for (const char* setter : {"signal", "bsd_signal", "sysv_signal", "sigset"}) {
        SCOPED_TRACE(setter);
        TempDir out;
        Compared c = run_both("signal_dispositions", {"chain", setter}, out);
        EXPECT_EQ(c.traced.exit_code(), 7) << c.traced.out;
        EXPECT_NE(c.traced.out.find("previous handler is the application's"), std::string::npos) << c.traced.out;
        ASSERT_EQ(c.logs.size(), 1u) << describe(c.logs);
        const ProcessLog& log = c.logs[0];
        auto sig = log.first("signal");
        ASSERT_TRUE(sig) << "the signal went around the recorder";
        EXPECT_EQ((*sig)["name"], "SIGTERM");
        EXPECT_EQ((*sig)["disposition"], "handler");
        auto end = log.first("process_end");
        ASSERT_TRUE(end);
        EXPECT_EQ((*end)["how"], "_exit");
        EXPECT_EQ((*end)["status"], 7);
    }
}

// What sigaction(sig, NULL, &old) answers after each way of setting a
// disposition (sigaction, signal, bsd_signal, sysv_signal, sigset, sigignore,
// siginterrupt, never set): the same handler, flags (SA_RESTORER included,
// which glibc adds), and mask as without the recorder.
TEST(PreloadOwned, DispositionsReadBackAsWithoutTheRecorder) {
    TempDir out;
    Compared c = run_both("signal_dispositions", {"query"}, out);
    EXPECT_EQ(c.traced.exit_code(), 0) << c.traced.err;
    // The plain run's own answers, as a check on the program itself.
    EXPECT_NE(c.plain.out.find("signal      sig 10: handler other_handler"), std::string::npos) << c.plain.out;
    EXPECT_NE(c.plain.out.find("sigignore   sig 14: handler SIG_IGN"), std::string::npos) << c.plain.out;
    EXPECT_NE(c.plain.out.find("never set   sig  3: handler SIG_DFL flags 0 restorer none"), std::string::npos)
        << c.plain.out;
    ASSERT_EQ(c.logs.size(), 1u) << describe(c.logs);
}

// siglongjmp out of a SIGUSR1 handler, three times (the third from an
// alternate signal stack), then a normal return from main: the recorder no
// longer believes the process is inside a handler, and writes its model.
TEST(PreloadOwned, SiglongjmpOutOfAHandlerLeavesTheModelWritten) {
    TempDir out;
    Compared c = run_both("signal_dispositions", {"siglongjmp"}, out);
    EXPECT_EQ(c.traced.exit_code(), 8) << c.traced.err;
    ASSERT_EQ(c.logs.size(), 1u) << describe(c.logs);
    const ProcessLog& log = c.logs[0];
    EXPECT_EQ(log.all("signal").size(), 3u);
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["how"], "exit");
    EXPECT_EQ((*end)["status"], 8);
    auto model = log.first("model");
    ASSERT_TRUE(model);
    EXPECT_TRUE((*model)["ok"].get<bool>()) << model->dump();
}

// The control case: exit() really called from a handler still leaves the
// model out, with the reason.
TEST(PreloadOwned, ExitFromAHandlerStillLeavesTheModelOut) {
    TempDir out;
    Compared c = run_both("signal_dispositions", {"exit-in-handler"}, out);
    EXPECT_EQ(c.traced.exit_code(), 9) << c.traced.err;
    ASSERT_EQ(c.logs.size(), 1u) << describe(c.logs);
    auto model = c.logs[0].first("model");
    ASSERT_TRUE(model);
    EXPECT_FALSE((*model)["ok"].get<bool>());
    EXPECT_NE((*model)["error"].get<std::string>().find("signal handler"), std::string::npos) << model->dump();
}

// ---------------------------------------------------------------------------
// Descriptors

// Started with its standard error closed, the application's first open()
// gets descriptor 2 for its data file. A recorder notice (the forked child
// cannot create its log: the recorder's descriptors closed, the others used
// up) once landed inside that file;
// it is now dropped, since descriptor 2 is not the standard error the process
// started with.
TEST(PreloadOwned, NoticesNeverGoIntoAFileAtDescriptorTwo) {
    TempDir scratch;
    const fs::path plain_data = scratch.path() / "plain.data";
    const fs::path traced_data = scratch.path() / "traced.data";
    TempDir out;
    Compared c = run_both("owned_descriptors", {"notice-into-data", plain_data.string()},
                          {"notice-into-data", traced_data.string()}, out);
    EXPECT_EQ(c.traced.exit_code(), 3) << c.traced.err;
    EXPECT_NE(c.plain.out.find("DATA got descriptor 2"), std::string::npos) << c.plain.out;
    EXPECT_EQ(read_text(traced_data), "application data\n");
    // Both images are recorded (the exec'ed one with its fork); the child
    // could not be: the application closed the recorder's descriptors and
    // used up the rest, so its host directory could not be opened again.
    ASSERT_EQ(c.logs.size(), 2u) << describe(c.logs);
    const ProcessLog* image = find_log(c.logs, "owned_descriptors", 1, "exec");
    ASSERT_NE(image, nullptr) << describe(c.logs);
    EXPECT_TRUE(image->first("fork"));
    auto end = image->first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 3);
}

// A daemon-like program closes every descriptor >= 3 (the recorder's host
// directory and log among them), opens 1,100 descriptors of its own (its
// directory, or regular files), which take those numbers, and forks. The
// child's log once went into the application's directory
// (appdirs/pid-N.jsonl of the per-process layout), or the child ran untraced ("Not a directory"), and
// the child's recorder closed one of the application's descriptors. Now the
// recorder finds its directory again by its path: both processes are
// recorded, in OUT, and the application's descriptors, directory and files
// are untouched. The application's files, unlinked at the end (as temporary
// files are), are not taken for a removed log (which was said on stderr,
// and cost the model).
void expect_squat_recorded(const char* kind, const std::map<std::string, std::string>& env = {}) {
    SCOPED_TRACE(kind);
    TempDir plain_scratch, traced_scratch, out;
    Compared c = run_both("owned_descriptors", {"squat", kind, plain_scratch.path().string()},
                          {"squat", kind, traced_scratch.path().string()}, out, env);
    EXPECT_EQ(c.traced.exit_code(), 0) << c.traced.err;
    EXPECT_NE(c.plain.out.find(std::string("the child's 1100 ") + kind + " intact: 1100"), std::string::npos)
        << c.plain.out;
    for (const auto& entry : fs::recursive_directory_iterator(traced_scratch.path())) {
        const std::string name = entry.path().filename().string();
        EXPECT_TRUE(entry.path().extension() != ".jsonl" && !name.starts_with("node.") && !name.starts_with(".node."))
            << "a recorder's file among the application's files: " << entry.path();
    }
    ASSERT_EQ(c.logs.size(), 2u) << describe(c.logs);
    const ProcessLog* parent = find_log(c.logs, "owned_descriptors", 0, "exec");
    const ProcessLog* child = find_log(c.logs, "owned_descriptors", 0, "fork");
    ASSERT_NE(parent, nullptr) << describe(c.logs);
    ASSERT_NE(child, nullptr) << describe(c.logs);
    auto fork = parent->first("fork");
    ASSERT_TRUE(fork);
    EXPECT_EQ((*fork)["child_pid"], child->pid());
    EXPECT_EQ(child->all("thread_start").size(), 1u);
    auto child_end = child->first("process_end");
    ASSERT_TRUE(child_end);
    EXPECT_EQ((*child_end)["status"], 4);
    auto parent_end = parent->first("process_end");
    ASSERT_TRUE(parent_end);
    EXPECT_EQ((*parent_end)["status"], 0);
}

TEST(PreloadOwned, DirectoriesAtTheRecordersDescriptorNumbersAreNeverWrittenInto) { expect_squat_recorded("dirs"); }

TEST(PreloadOwned, RegularFilesAtTheRecordersDescriptorNumbersLeaveTheChildRecorded) { expect_squat_recorded("files"); }

// The same, sampled (software events: page faults, CPU clock) with the raw
// sample file: the sampler's descriptors (its wake-up pipe, each thread's
// perf events, the raw file) had numbers the application then took, and the
// sampler wrote into, read from or closed 1 of the parent's files and 4 of
// the child's. Each is now checked before use and left alone once it is the
// application's.
TEST(PreloadOwned, TheSamplersDescriptorsAreNeverUsedOnceTheApplicationHasTheirNumbers) {
    const std::map<std::string, std::string> sampled = {{"STACKSAGE_SAMPLE", "auto"}, {"STACKSAGE_SAMPLE_RAW", "1"}};
    {
        // Whether this machine samples at all (perf_event_paranoid, a kernel without perf).
        TempDir probe;
        run_example("owned_descriptors", {"squat", "dirs", probe.path().string()}, probe.path(), sampled);
        bool started = false;
        for (const auto& log : read_logs(probe.path()))
            if (auto s = log.first("sampling")) started = started || s->value("started", false);
        if (!started) GTEST_SKIP() << "sampling does not start on this machine";
    }
    expect_squat_recorded("files", sampled);
}

}  // namespace
}  // namespace stacksage::testing
