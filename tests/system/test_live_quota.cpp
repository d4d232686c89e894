// Live runs under a cgroup CPU quota: a 2-thread OpenMP program in a cgroup
// that grants a fraction of a CPU is throttled, and `stacksage report` says so
// (cpu-quota-throttled, with the counters the recorder read at the
// process's start and end); the same program in a cgroup without a quota is
// not. The cgroups are made here (cgroup v1's cpu controller, or v2's
// cpu.max, whichever the machine has; root is needed) and always removed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "parsers/node_file_reader.hpp"
#include "tests/support/cpu_cgroup.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace fs = std::filesystem;

namespace {

using stacksage::testing::Shell;
using stacksage::testing::shell;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";

using stacksage::testing::CpuCgroup;
using stacksage::testing::cgroup_detail::read_text;

// `stacksage run` of the 2-thread OpenMP example inside the cgroup (the
// shell moves itself in, then execs the command), and the JSON report.
nlohmann::json run_in(const CpuCgroup& cgroup, const stacksage::testing::TempDir& dir, double seconds) {
    const std::string omp = kBin + "/examples/omp_gomp";
    const Shell run = shell("sh -c 'echo $$ > " + cgroup.procs() + " && exec env OMP_NUM_THREADS=2 " + kCli +
                            " run -q -o " + dir.str() + "/out -- " + omp + " " + std::to_string(seconds) + "'");
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

#define REQUIRE_OPENMP_EXAMPLE()                                                                \
    do {                                                                                        \
        if (!stacksage::testing::is_executable(kBin + "/examples/omp_gomp"))                    \
            GTEST_SKIP() << "examples/omp_gomp is not built";                                   \
        if (!stacksage::testing::is_executable(kCli)) GTEST_SKIP() << "stacksage is not built"; \
    } while (0)

}  // namespace

// The job had 0.5 CPU. Here 0.1: on this shared 2-core machine,
// loaded by other builds, two threads may get under half a CPU from the
// scheduler alone and never use up a 0.5-CPU quota (measured: 0 throttled
// periods of 10 at a load average of 13); a tenth of a CPU they exceed
// up to a load average of about 40.
TEST(LiveQuota, TwoOpenMpThreadsUnderASmallQuotaAreThrottled) {
    REQUIRE_OPENMP_EXAMPLE();
    CpuCgroup cgroup(10'000, 100'000);
    if (!cgroup.ok()) GTEST_SKIP() << cgroup.reason();
    stacksage::testing::TempDir dir;
    const auto report = run_in(cgroup, dir, 0.6);
    ASSERT_FALSE(report.is_discarded());
    const auto throttled = findings(report, "cpu-quota-throttled");
    ASSERT_EQ(throttled.size(), 1u) << report.dump(1);
    const auto& f = throttled[0];
    EXPECT_EQ(f["severity"], "warning");
    const auto& figures = f["figures"];
    EXPECT_GT(figures["throttled_periods"].get<long>(), 0) << f.dump(1);
    EXPECT_GE(figures["periods"].get<long>(), figures["throttled_periods"].get<long>());
    EXPECT_GE(figures["throttled_ms"].get<long>(), 10);
    EXPECT_EQ(figures["quota_cpus_x100"], 10);
    EXPECT_EQ(figures["quota_us"], 10'000);
    EXPECT_EQ(figures["period_us"], 100'000);
    EXPECT_NE(f["message"].get<std::string>().find(cgroup.name()), std::string::npos) << f["message"];
    EXPECT_NE(f["message"].get<std::string>().find("0.1 CPU"), std::string::npos) << f["message"];
    EXPECT_NE(f["suggestion"].get<std::string>().find("OMP_NUM_THREADS=1"), std::string::npos) << f["suggestion"];
    // The quota is the node's capacity: two threads overload half a CPU.
    bool overloaded = false;
    for (const auto& o : report["findings"])
        if (o["code"] == "overloaded-reservation" || o["code"] == "overloaded-resources") overloaded = true;
    EXPECT_TRUE(overloaded) << report.dump(1);
    EXPECT_TRUE(findings(report, "idle-resources").empty()) << report.dump(1);
    EXPECT_EQ(report["nodes"][0]["cpu_quota"], 0.1);
    // The process's own model (written by the recorder at exit) carries the quota too.
    bool model_has_quota = false;
    for (const auto& host : fs::directory_iterator(dir.path() / "out"))
        if (host.is_directory())
            if (auto models = stacksage::read_node_file((host.path() / "node.models").string(), "node.models",
                                                        stacksage::formats::node_file::FileKind::models))
                for (const auto& stream : models->streams) {
                    const auto model = nlohmann::json::parse(stream.text, nullptr, false);
                    for (const auto& c : model["components"])
                        for (const auto& a : c["attributes"])
                            if (a["key"] == "cpu_quota_us" && a["value"] == 10'000) model_has_quota = true;
                }
    EXPECT_TRUE(model_has_quota);
    // The terminal report says the node's capacity.
    const Shell text = shell(kCli + " report " + dir.str() + "/out");
    EXPECT_NE(text.output.find("available under a CPU quota of 0.1 CPU"), std::string::npos) << text.output;
}

TEST(LiveQuota, TheSameProgramWithoutAQuotaIsNotThrottled) {
    REQUIRE_OPENMP_EXAMPLE();
    CpuCgroup cgroup(-1, 100'000);
    if (!cgroup.ok()) GTEST_SKIP() << cgroup.reason();
    stacksage::testing::TempDir dir;
    const auto report = run_in(cgroup, dir, 0.3);
    ASSERT_FALSE(report.is_discarded());
    EXPECT_TRUE(findings(report, "cpu-quota-throttled").empty()) << report.dump(1);
    EXPECT_TRUE(report["nodes"][0]["cpu_quota"].is_null()) << report.dump(1);
}
