// Warnings while the job runs (preload/live_watcher.hpp), on real programs
// under `stacksage run`, their stderr read line by line as it comes: a job
// over-subscribed from its start is told within 7 s; a clean job is told
// nothing over 30 s; a job that turns over-subscribed midway is told after
// it turns; --live=off, -q and the hold setting do what they say; an MPI job
// whose ranks x OMP_NUM_THREADS outnumber the node's CPUs is told at
// MPI_Init. The report shows the warning ("Warned live at ...").
//
// The watcher counts a thread busy when it is runnable (state R), which a
// thread waiting for a CPU is: a loaded machine does not make a clean job
// look idle, so these run next to other tests.
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/cpu_cgroup.hpp"
#include "tests/support/recorded_events.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace fs = std::filesystem;

namespace {

using stacksage::testing::shell;
using stacksage::testing::TempDir;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";
std::string example(const std::string& name) { return kBin + "/examples/" + name; }

// The CPUs this test may use: what a job it starts is allowed.
int allowed_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    return CPU_COUNT(&set);
}

struct TimedLine {
    double at_s;  // since the command started
    std::string text;
};

struct TimedRun {
    int exit_code = -1;
    std::vector<TimedLine> lines;  // stdout and stderr, each line when it came

    std::vector<TimedLine> live(const std::string& what) const {
        std::vector<TimedLine> out;
        for (const TimedLine& l : lines)
            if (l.text.find("stacksage: live warning") != std::string::npos && l.text.find(what) != std::string::npos)
                out.push_back(l);
        return out;
    }
    std::string all() const {
        std::string s;
        for (const TimedLine& l : lines) s += std::to_string(l.at_s) + " " + l.text;
        return s;
    }
};

TimedRun run_timed(const std::string& cmd) {
    const auto start = std::chrono::steady_clock::now();
    TimedRun r;
    FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
    if (pipe == nullptr) return r;
    char buf[8192];
    while (std::fgets(buf, sizeof buf, pipe) != nullptr)
        r.lines.push_back(
            {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), std::string(buf)});
    const int status = pclose(pipe);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// Every live_warning event in the run directory's logs (streams of
// OUT/<host>/node.events).
std::vector<nlohmann::json> live_events(const fs::path& out) {
    std::vector<nlohmann::json> events;
    for (auto& e : stacksage::testing::recorded_events(out))
        if (e.value("ev", "") == "live_warning") events.push_back(std::move(e));
    return events;
}

std::string run_command(const TempDir& out, const std::string& options, const std::string& program) {
    return kCli + " run -o " + out.str() + "/run " + options + " -- " + program;
}

}  // namespace

TEST(LiveWarnings, AJobOversubscribedFromItsStartIsToldWithinSevenSeconds) {
    TempDir out;
    const int threads = 4 * allowed_cpus();
    const TimedRun r = run_timed(run_command(out, "", example("busy_threads") + " " + std::to_string(threads) + " 9"));
    ASSERT_EQ(r.exit_code, 0) << r.all();
    const auto lines = r.live("over-subscribed");
    ASSERT_EQ(lines.size(), 1u) << "one line per node and condition\n" << r.all();
    EXPECT_LE(lines[0].at_s, 7.0) << r.all();
    EXPECT_NE(lines[0].text.find(std::to_string(threads) + " busy threads share"), std::string::npos) << r.all();
    EXPECT_NE(lines[0].text.find("Fix: "), std::string::npos);
    EXPECT_NE(lines[0].text.find("The full report follows after the run."), std::string::npos);

    const auto events = live_events(out.path() / "run");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["condition"], "oversubscribed");
    EXPECT_EQ(events[0]["source"], "watcher");
    EXPECT_EQ(events[0]["threads"], threads);
    EXPECT_EQ(events[0]["said"], true);
    EXPECT_GE(events[0]["t"].get<std::int64_t>() - events[0]["since"].get<std::int64_t>(), 5'000'000'000);

    const auto report = shell(kCli + " report " + out.str() + "/run");
    EXPECT_NE(report.output.find("Warned live at "), std::string::npos) << report.output;
    const auto json = shell(kCli + " report -f json " + out.str() + "/run");
    EXPECT_NE(json.output.find("\"live-warning\""), std::string::npos) << json.output;
}

TEST(LiveWarnings, ACleanJobIsToldNothingOverThirtySeconds) {
    TempDir out;
    // One computing thread per CPU, the main thread waiting in join.
    const TimedRun r =
        run_timed(run_command(out, "", example("busy_threads") + " " + std::to_string(allowed_cpus()) + " 30"));
    ASSERT_EQ(r.exit_code, 0) << r.all();
    EXPECT_TRUE(r.live("").empty()) << r.all();
    EXPECT_TRUE(live_events(out.path() / "run").empty());
    EXPECT_GE(r.lines.back().at_s, 30.0);
}

TEST(LiveWarnings, AJobThatTurnsOversubscribedMidwayIsToldAfterItTurns) {
    TempDir out;
    // Two threads compute free for 8 s, then both bound to one CPU for 9 s.
    const TimedRun r = run_timed(run_command(out, "", example("rebind_midway") + " 8 9 free-first"));
    ASSERT_EQ(r.exit_code, 0) << r.all();
    const auto lines = r.live("over-subscribed");
    ASSERT_EQ(lines.size(), 1u) << r.all();
    EXPECT_GE(lines[0].at_s, 8.0 + 4.0) << "the line came before the turn had held 5 s\n" << r.all();
    EXPECT_NE(lines[0].text.find("2 busy threads share CPU "), std::string::npos) << r.all();
}

TEST(LiveWarnings, OffQuietAndTheHoldDoWhatTheySay) {
    const std::string program = example("busy_threads") + " " + std::to_string(4 * allowed_cpus()) + " 3";
    {
        TempDir out;
        const TimedRun r = run_timed(run_command(out, "--live=off --live-hold 1", program));
        ASSERT_EQ(r.exit_code, 0) << r.all();
        EXPECT_TRUE(r.live("").empty()) << r.all();
        EXPECT_TRUE(live_events(out.path() / "run").empty());
    }
    {
        TempDir out;  // -q: no line, the event all the same
        const TimedRun r = run_timed(run_command(out, "-q --live-hold 1", program));
        ASSERT_EQ(r.exit_code, 0) << r.all();
        EXPECT_TRUE(r.live("").empty()) << r.all();
        const auto events = live_events(out.path() / "run");
        ASSERT_EQ(events.size(), 1u);
        EXPECT_EQ(events[0]["said"], false);
    }
    {
        TempDir out;  // the hold from the environment
        const TimedRun r = run_timed("STACKSAGE_LIVE_HOLD=1 " + run_command(out, "", program));
        ASSERT_EQ(r.exit_code, 0) << r.all();
        const auto lines = r.live("over-subscribed");
        ASSERT_EQ(lines.size(), 1u) << r.all();
        EXPECT_LE(lines[0].at_s, 3.0) << r.all();
    }
    {
        TempDir out;  // a hold that is no number of seconds: said, and the default kept
        const TimedRun r = run_timed("STACKSAGE_LIVE_HOLD=soon " + run_command(out, "", example("busy_threads") + " 1 0.1"));
        EXPECT_NE(r.all().find("STACKSAGE_LIVE_HOLD='soon' is not a number of seconds"), std::string::npos) << r.all();
    }
}

TEST(LiveWarnings, AJobHeldBackByItsCpuQuotaIsTold) {
    // A tenth of a CPU: two computing threads exceed it whatever the load
    // (tests/system/test_live_quota.cpp says why not half).
    stacksage::testing::CpuCgroup cgroup(10'000, 100'000);
    if (!cgroup.ok()) GTEST_SKIP() << cgroup.reason();
    TempDir out;
    const TimedRun r = run_timed("sh -c 'echo $$ > " + cgroup.procs() + " && exec " +
                                 run_command(out, "", example("busy_threads") + " 2 9") + "'");
    ASSERT_EQ(r.exit_code, 0) << r.all();
    const auto lines = r.live("CPU quota throttling");
    ASSERT_EQ(lines.size(), 1u) << r.all();
    EXPECT_NE(lines[0].text.find(cgroup.name()), std::string::npos) << r.all();
    EXPECT_NE(lines[0].text.find("grants 0.10 CPUs"), std::string::npos) << r.all();
    const auto events = live_events(out.path() / "run");
    bool throttled = false;
    for (const auto& e : events)
        if (e["condition"] == "cpu_throttled") throttled = e["throttled_periods"].get<long>() > 0;
    EXPECT_TRUE(throttled);
}

TEST(LiveWarnings, AHostileRegistryIsRefusedNeverWaitedOn) {
    // The host folder as the recorder names it (uname's nodename, [A-Za-z0-9._-] kept).
    std::string host = shell("uname -n").output;
    while (!host.empty() && host.back() == '\n') host.pop_back();
    for (char& c : host)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
    const std::string program = example("busy_threads") + " " + std::to_string(4 * allowed_cpus()) + " 2";
    const std::vector<std::string> plants = {
        "mkfifo {}",                                       // a FIFO: opening it must not wait for a writer
        "ln -s /etc/passwd {}",                            // a link: never followed
        "head -c 49216 /dev/urandom > {}",                 // the registry's size, not its mark
    };
    for (const std::string& plant : plants) {
        TempDir out;
        const fs::path registry = out.path() / "run" / host / "live.node";
        fs::create_directories(registry.parent_path());
        std::string cmd = plant;
        cmd.replace(cmd.find("{}"), 2, registry.string());
        ASSERT_EQ(shell(cmd).exit_code, 0) << cmd;
        const TimedRun r = run_timed(run_command(out, "--live-hold 1", program));
        ASSERT_EQ(r.exit_code, 0) << plant << "\n" << r.all();
        EXPECT_TRUE(r.live("").empty()) << plant << "\n" << r.all();
        EXPECT_LE(r.lines.back().at_s, 10.0) << plant << "\n" << r.all();
        EXPECT_TRUE(live_events(out.path() / "run").empty()) << plant;
    }
}

TEST(LiveWarnings, RanksTimesThreadsBeyondTheCpusAreToldAtMpiInit) {
    const std::string mpirun = stacksage::testing::which("mpirun");
    if (mpirun.empty() || !stacksage::testing::is_executable(example("mpi_omp")))
        GTEST_SKIP() << "no mpirun or MPI example";
    TempDir out;
    const int threads = 2 * allowed_cpus();  // 2 ranks x that: four times the CPUs
    const std::string root = ::geteuid() == 0 ? " --allow-run-as-root" : "";
    const TimedRun r = run_timed("OMP_NUM_THREADS=" + std::to_string(threads) + " " +
                                 run_command(out, "", mpirun + root + " --oversubscribe -np 2 --bind-to none " +
                                                          example("mpi_omp") + " 0.5"));
    ASSERT_EQ(r.exit_code, 0) << r.all();
    const auto lines = r.live("over-subscribed from the start: 2 ranks x OMP_NUM_THREADS = " +
                              std::to_string(2 * threads) + " threads");
    ASSERT_EQ(lines.size(), 1u) << "one line for the node, not one per rank\n" << r.all();
    const auto events = live_events(out.path() / "run");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0]["source"], "mpi_init");
    EXPECT_EQ(events[0]["allowed_cpus"], allowed_cpus());
}
