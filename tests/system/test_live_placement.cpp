// Live runs whose placement changes while threads run (examples/rebind_midway.c)
// and launches that start short processes before the program: `stacksage run`
// with the real recorder, judged by `stacksage report`. Every moment is judged
// with the mask each thread held then, and a warning caused by affinity calls
// names them. Restricted with taskset to CPUs 0-1.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using stacksage::testing::Shell;
using stacksage::testing::shell;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";

nlohmann::json record_and_report(const stacksage::testing::TempDir& dir, const std::string& command) {
    const Shell run = shell(kCli + " run -q -o " + dir.str() + "/out -- " + command);
    EXPECT_EQ(run.exit_code, 0) << run.output;
    const Shell report = shell(kCli + " report " + dir.str() + "/out --format json");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    return nlohmann::json::parse(report.output, nullptr, false);
}

std::vector<nlohmann::json> findings(const nlohmann::json& report, const std::string& code) {
    std::vector<nlohmann::json> out;
    for (const auto& f : report["findings"])
        if (f["code"] == code) out.push_back(f);
    return out;
}

bool contains(const nlohmann::json& text, const std::string& part) {
    return text.is_string() && text.get<std::string>().find(part) != std::string::npos;
}

#define REQUIRE_PROGRAM(path)                                                                       \
    do {                                                                                            \
        if (!stacksage::testing::is_executable(path)) GTEST_SKIP() << (path) << " is not built";   \
        if (!stacksage::testing::is_executable(kBin + "/preload/libstacksage-preload.so"))         \
            GTEST_SKIP() << "the preload is not built";                                             \
        if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";                    \
    } while (0)

}  // namespace

// Two threads compute free on CPUs 0-1 for 1 s, then bind themselves to
// CPU 0 (pthread_setaffinity_np and sched_setaffinity) for 1 s: CPU 0 is
// over-subscribed for about half the run, by those 2 threads (the main
// thread waited in pthread_join), after their calls; the suggestion
// addresses the calls, not the process's cores (it had both).
TEST(LivePlacement, ThreadsThatBindThemselvesMidwayAreOverloadedForThatPart) {
    const std::string program = kBin + "/examples/rebind_midway";
    REQUIRE_PROGRAM(program);
    stacksage::testing::TempDir dir;
    const auto report = record_and_report(dir, "taskset -c 0,1 " + program + " 1 1 free-first");
    ASSERT_FALSE(report.is_discarded());
    const auto overloaded = findings(report, "overloaded-resources");
    ASSERT_EQ(overloaded.size(), 1u) << report.dump(1);
    const auto& f = overloaded[0];
    EXPECT_EQ(f["resources"], "0") << f.dump(1);
    const int over = f["figures"]["over_demanded_ms"].get<int>(), run = f["figures"]["run_ms"].get<int>();
    EXPECT_GE(over, 700) << f.dump(1);
    EXPECT_LE(over, 1400) << f.dump(1);
    EXPECT_GE(f["figures"]["over_demand_from_ms"].get<int>(), 700) << f.dump(1);
    EXPECT_LT(2 * over, run + 600) << f.dump(1);  // about half the run, not all of it
    EXPECT_EQ(f["flow_count"], 2) << f.dump(1);
    EXPECT_TRUE(contains(f["detail"], "2 threads of 1 process")) << f.dump(1);
    EXPECT_EQ(f["figures"]["affinity_calls"], 2) << f.dump(1);
    EXPECT_TRUE(contains(f["message"], "after affinity calls: thread ")) << f.dump(1);
    EXPECT_TRUE(contains(f["message"], "with pthread_setaffinity_np at 1.")) << f.dump(1);
    EXPECT_TRUE(contains(f["message"], "with sched_setaffinity at 1.")) << f.dump(1);
    EXPECT_TRUE(contains(f["message"], "called from rebind_midway (it had CPUs 0-1)")) << f.dump(1);
    EXPECT_TRUE(contains(f["suggestion"], "The over-subscription followed affinity calls of the program itself"))
        << f.dump(1);
    EXPECT_FALSE(contains(f["suggestion"], "Give the process")) << f.dump(1);
    EXPECT_TRUE(findings(report, "idle-resources").empty()) << report.dump(1);
}

// Bound to CPU 0 for 0.3 s, then free for 1.5 s: over-subscription for
// some 16 % of the run is a warning, with its duration.
TEST(LivePlacement, ThreadsBoundAtFirstThenFreedAreWarnedForTheBoundPart) {
    const std::string program = kBin + "/examples/rebind_midway";
    REQUIRE_PROGRAM(program);
    stacksage::testing::TempDir dir;
    const auto report = record_and_report(dir, "taskset -c 0,1 " + program + " 1.5 0.3 bound-first");
    ASSERT_FALSE(report.is_discarded());
    const auto overloaded = findings(report, "overloaded-resources");
    ASSERT_EQ(overloaded.size(), 1u) << report.dump(1);
    const auto& f = overloaded[0];
    EXPECT_EQ(f["resources"], "0") << f.dump(1);
    const int over = f["figures"]["over_demanded_ms"].get<int>();
    EXPECT_GE(over, 200) << f.dump(1);
    EXPECT_LE(over, 600) << f.dump(1);
    EXPECT_LE(f["figures"]["over_demand_from_ms"].get<int>(), 200) << f.dump(1);
    EXPECT_TRUE(contains(f["message"], "after affinity calls: thread ")) << f.dump(1);
    EXPECT_EQ(f["flow_count"], 2) << f.dump(1);
}

// A launch that first runs `hostname` and short `sh -c` children, then the
// real program (4 threads on 2 cores): the short processes overlapped
// nothing and are no ranks. The advice is for the one process that ran.
TEST(LivePlacement, ShortProcessesBeforeTheProgramCountForNothing) {
    const std::string busy = kBin + "/examples/busy_threads";
    REQUIRE_PROGRAM(busy);
    stacksage::testing::TempDir dir;
    const std::string script = "hostname >/dev/null; sh -c true; sh -c 'echo started' >/dev/null; "
                               "exec taskset -c 0,1 " + busy + " 4 0.8";
    const auto report = record_and_report(dir, "sh -c \"" + script + "\"");
    ASSERT_FALSE(report.is_discarded());
    EXPECT_GE(report["summary"]["processes"].get<int>(), 4) << report.dump(1);  // the short ones were recorded
    const auto overloaded = findings(report, "overloaded-resources");
    ASSERT_EQ(overloaded.size(), 1u) << report.dump(1);
    const auto& f = overloaded[0];
    EXPECT_TRUE(contains(f["detail"], "threads of 1 process may run at once")) << f.dump(1);
    EXPECT_TRUE(contains(f["suggestion"], "The process had 4 threads computing at once on the 2 cores")) << f.dump(1);
    EXPECT_FALSE(contains(f["suggestion"], "processes with up to")) << f.dump(1);
}

// The cross-check, with the real `taskset -p`: a worker's mask changed from
// outside the process (no call of its own the recorder could see) is found
// at the worker's end, and the report says so rather than keeping silent.
TEST(LivePlacement, AMaskChangedFromOutsideIsFoundAtTheThreadsEnd) {
    const std::string program = kBin + "/examples/busy_threads";
    REQUIRE_PROGRAM(program);
    stacksage::testing::TempDir dir;
    // One worker computes for 1.5 s; after 0.5 s, `taskset -p` moves every
    // thread of the program but the main thread and the recorder's to CPU 0.
    const std::string script = "taskset -c 0,1 " + program +
                               " 1 1.5 & pid=$!; sleep 0.5; for t in /proc/$pid/task/*; do "
                               "tid=${t##*/}; [ $tid = $pid ] && continue; "
                               "case $(cat $t/comm) in stacksage*) continue;; esac; "
                               "taskset -p -c 0 $tid >/dev/null; echo moved $tid; done; wait $pid";
    const Shell run = shell(kCli + " run -q -o " + dir.str() + "/out -- sh -c '" + script + "'");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto moved = run.output.find("moved ");
    ASSERT_NE(moved, std::string::npos) << run.output;
    const std::string tid = run.output.substr(moved + 6, run.output.find('\n', moved) - moved - 6);
    const Shell report = shell(kCli + " report " + dir.str() + "/out --format json");
    ASSERT_EQ(report.exit_code, 0) << report.output;
    const auto json = nlohmann::json::parse(report.output, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << report.output;
    int told = 0;
    for (const auto& n : json["input"]["notes"])
        if (contains(n["message"], "1 thread(s) ended with a CPU mask other than the one recorded last (thread " +
                                       tid + ": 0-1 recorded last, 0 at its end)"))
            ++told;
    EXPECT_EQ(told, 1) << json["input"].dump(1);
}
