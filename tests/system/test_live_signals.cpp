// Live runs whose processes are ended by SIGTERM's default action: the
// recorder's fatal-signal path writes what process_end would have said (each
// live thread's CPU time, the process's usage, the main thread's CPU time)
// before the process dies, so `stacksage report` knows how busy they were.
// Without it their CPU times were unknown (null in the JSON report, "-" in
// the HTML page).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using stacksage::testing::Shell;
using stacksage::testing::shell;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";

nlohmann::json report_of(const stacksage::testing::TempDir& dir) {
    const Shell report = shell(kCli + " report " + dir.str() + "/out --format json");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    return nlohmann::json::parse(report.output, nullptr, false);
}

// The report's processes that ended by `end` ("signal SIGTERM").
std::vector<nlohmann::json> processes_ended_by(const nlohmann::json& report, const std::string& end) {
    std::vector<nlohmann::json> out;
    for (const auto& node : report["nodes"])
        for (const auto& p : node["processes"])
            if (p["end"] == end) out.push_back(p);
    return out;
}

}  // namespace

// Python's multiprocessing.Pool ends its workers with SIGTERM (terminate(),
// which leaving its `with` block calls). Debian's python3, not a pyenv one.
TEST(LiveSignals, PoolWorkersEndedBySigtermKeepTheirCpuTimes) {
    const std::string python = "/usr/bin/python3";
    if (!stacksage::testing::is_executable(python)) GTEST_SKIP() << python << " is not installed";
    if (!stacksage::testing::is_executable(kCli)) GTEST_SKIP() << "stacksage is not built";
    stacksage::testing::TempDir dir;
    const std::string script = dir.str() + "/pool.py";
    std::ofstream(script) << "import multiprocessing as mp, time\n"
                             "def spin(_):\n"
                             "    end = time.time() + 30\n"
                             "    n = 0\n"
                             "    while time.time() < end:\n"
                             "        n += 1\n"
                             "    return n\n"
                             "if __name__ == '__main__':\n"
                             "    mp.set_start_method('fork')\n"
                             "    with mp.Pool(2) as pool:\n"
                             "        pool.map_async(spin, range(2))\n"
                             "        time.sleep(1.0)\n"
                             "    print('terminated')\n";
    const Shell run = shell(kCli + " run -q -o " + dir.str() + "/out -- " + python + " " + script);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto report = report_of(dir);
    ASSERT_FALSE(report.is_discarded());
    const auto workers = processes_ended_by(report, "signal SIGTERM");
    ASSERT_EQ(workers.size(), 2u) << report.dump(1);
    for (const auto& w : workers) {
        ASSERT_FALSE(w["flows"].empty()) << w.dump(1);
        for (const auto& f : w["flows"]) {
            ASSERT_TRUE(f["cpu_us"].is_number()) << "a worker's thread has no CPU time: " << w.dump(1);
        }
        // The main thread spun while the parent slept a second; on this shared
        // machine it may have got a small share of a CPU, but some.
        EXPECT_GT(w["flows"][0]["cpu_us"].get<long>(), 10'000) << w.dump(1);
    }
}

// A C program whose two computing threads are never joined: SIGTERM (from
// timeout) ends it while they run. Each thread's CPU time is read by the
// handler (thread_usage_at_exit), the main thread's too.
TEST(LiveSignals, ThreadsOfAProcessEndedBySigtermKeepTheirCpuTimes) {
    const std::string busy = kBin + "/examples/busy_threads";
    if (!stacksage::testing::is_executable(busy)) GTEST_SKIP() << busy << " is not built";
    if (!stacksage::testing::is_executable(kCli)) GTEST_SKIP() << "stacksage is not built";
    stacksage::testing::TempDir dir;
    const Shell run = shell(kCli + " run -q -o " + dir.str() + "/out -- timeout -s TERM 0.8 " + busy + " 2 30");
    ASSERT_EQ(run.exit_code, 124) << run.output;  // timeout's status when it sent the signal
    const auto report = report_of(dir);
    ASSERT_FALSE(report.is_discarded());
    const auto killed = processes_ended_by(report, "signal SIGTERM");
    ASSERT_EQ(killed.size(), 1u) << report.dump(1);
    const auto& flows = killed[0]["flows"];
    ASSERT_EQ(flows.size(), 3u) << killed[0].dump(1);
    for (const auto& f : flows) ASSERT_TRUE(f["cpu_us"].is_number()) << killed[0].dump(1);
    // The two workers computed (on 2 CPUs shared with other work: some of 0.8 s each).
    EXPECT_GT(flows[1]["cpu_us"].get<long>(), 10'000) << killed[0].dump(1);
    EXPECT_GT(flows[2]["cpu_us"].get<long>(), 10'000) << killed[0].dump(1);
}
