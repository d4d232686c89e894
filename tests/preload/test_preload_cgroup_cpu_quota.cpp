// The recorder's reader of the cgroups' CPU quota and throttling counters
// (preload/cgroup_cpu_quota.hpp), on cgroup trees built here in the layouts
// of cgroup v1 (cpu and cpuacct mounted together or apart) and v2 (alone or
// beside v1, "hybrid").
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "preload/cgroup_cpu_quota.hpp"

using namespace stacksage::preload;
namespace fs = std::filesystem;

namespace {

class CgroupTree : public ::testing::Test {
protected:
    void SetUp() override {
        root_ = fs::temp_directory_path() / ("stacksage-cgroup-" + std::to_string(getpid()) + "-" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(root_);
        fs::create_directories(root_);
    }
    void TearDown() override { fs::remove_all(root_); }

    void write(const std::string& relative, const std::string& text) {
        const fs::path path = root_ / relative;
        fs::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }
    bool read(std::string proc_cgroup, CgroupCpuQuota& out) {
        return read_cgroup_cpu_quota_at(root_.c_str(), proc_cgroup.data(), out);
    }

    fs::path root_;
};

constexpr const char* kV1Stat =
    "nr_periods 11\nnr_throttled 11\nthrottled_time 1580000000\nnr_bursts 0\nburst_time 0\n";

}  // namespace

TEST(CpuStat, ReadsTheCountersOfV1AndV2) {
    CgroupCpuQuota v1;
    parse_cpu_stat(kV1Stat, v1);
    EXPECT_EQ(v1.periods, 11);
    EXPECT_EQ(v1.throttled, 11);
    EXPECT_EQ(v1.throttled_ns, 1'580'000'000);

    CgroupCpuQuota v2;
    parse_cpu_stat(
        "usage_usec 900\nuser_usec 800\nsystem_usec 100\nnr_periods 40\nnr_throttled 7\n"
        "throttled_usec 1234\nnr_bursts 0\nburst_usec 0\n",
        v2);
    EXPECT_EQ(v2.periods, 40);
    EXPECT_EQ(v2.throttled, 7);
    EXPECT_EQ(v2.throttled_ns, 1'234'000);
}

TEST(CpuStat, LeavesWhatTheTextLacksUnknown) {
    CgroupCpuQuota q;
    parse_cpu_stat("nr_periods 5\nnr_throttledx 3\nthrottled_time -2\ngarbage\n", q);
    EXPECT_EQ(q.periods, 5);
    EXPECT_EQ(q.throttled, -1);
    EXPECT_EQ(q.throttled_ns, -1);
    CgroupCpuQuota empty;
    parse_cpu_stat("", empty);
    EXPECT_EQ(empty.periods, -1);
}

// cpu and cpuacct mounted together, named as /proc lists them; the smallest
// quota is the middle level's, and its counters are the ones read.
TEST_F(CgroupTree, V1NestedQuotasGiveTheSmallest) {
    write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
    write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
    write("cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
    write("cpu,cpuacct/job/cpu.cfs_quota_us", "100000\n");
    write("cpu,cpuacct/job/cpu.stat", "nr_periods 3\nnr_throttled 0\nthrottled_time 0\n");
    write("cpu,cpuacct/job/step/cpu.cfs_period_us", "100000\n");
    write("cpu,cpuacct/job/step/cpu.cfs_quota_us", "50000\n");
    write("cpu,cpuacct/job/step/cpu.stat", kV1Stat);
    write("cpu,cpuacct/job/step/task/cpu.cfs_period_us", "100000\n");
    write("cpu,cpuacct/job/step/task/cpu.cfs_quota_us", "-1\n");
    CgroupCpuQuota q;
    ASSERT_TRUE(read("12:pids:/job\n4:cpu,cpuacct:/job/step/task\n3:cpuset:/\n0::/\n", q));
    EXPECT_EQ(q.version, 1);
    EXPECT_EQ(q.quota_us, 50000);
    EXPECT_EQ(q.period_us, 100000);
    EXPECT_STREQ(q.cgroup, "/job/step");
    EXPECT_EQ(q.periods, 11);
    EXPECT_EQ(q.throttled, 11);
    EXPECT_EQ(q.throttled_ns, 1'580'000'000);
}

// cpu mounted alone (this development machine's layout); quotas compared as
// CPUs, not as microseconds: 30 ms per 50 ms (0.6) is more than 50 per 100.
TEST_F(CgroupTree, V1QuotasAreComparedInCpus) {
    write("cpu/cpu.cfs_period_us", "100000\n");
    write("cpu/cpu.cfs_quota_us", "-1\n");
    write("cpu/outer/cpu.cfs_period_us", "50000\n");
    write("cpu/outer/cpu.cfs_quota_us", "30000\n");
    write("cpu/outer/inner/cpu.cfs_period_us", "100000\n");
    write("cpu/outer/inner/cpu.cfs_quota_us", "50000\n");
    CgroupCpuQuota q;
    ASSERT_TRUE(read("2:cpuacct:/outer/inner\n1:cpu:/outer/inner\n", q));
    EXPECT_STREQ(q.cgroup, "/outer/inner");
    EXPECT_EQ(q.quota_us, 50000);
    // A parent with the smaller share wins, whatever its depth.
    write("cpu/outer/cpu.cfs_quota_us", "20000\n");
    ASSERT_TRUE(read("1:cpu:/outer/inner\n", q));
    EXPECT_STREQ(q.cgroup, "/outer");
    EXPECT_EQ(q.quota_us, 20000);
    EXPECT_EQ(q.period_us, 50000);
    // No cpu.stat there: the quota stands, the counters are unknown.
    EXPECT_EQ(q.periods, -1);
    EXPECT_EQ(q.throttled, -1);
    EXPECT_EQ(q.throttled_ns, -1);
}

TEST_F(CgroupTree, V1WithoutAQuotaAnywhereIsNone) {
    write("cpu/cpu.cfs_period_us", "100000\n");
    write("cpu/cpu.cfs_quota_us", "-1\n");
    write("cpu/a/cpu.cfs_period_us", "100000\n");
    write("cpu/a/cpu.cfs_quota_us", "-1\n");
    CgroupCpuQuota q;
    EXPECT_FALSE(read("1:cpu:/a\n0::/\n", q));
    EXPECT_FALSE(q.has_quota());
    EXPECT_STREQ(q.cgroup, "");
}

// Pure v2: the hierarchy is the root; "max" sets no quota.
TEST_F(CgroupTree, V2NestedQuotasAndMax) {
    write("cgroup.controllers", "cpuset cpu io memory pids\n");
    write("user.slice/cpu.max", "150000 100000\n");
    write("user.slice/cpu.stat", "usage_usec 5\nnr_periods 9\nnr_throttled 2\nthrottled_usec 30000\n");
    write("user.slice/job/cpu.max", "max 100000\n");
    CgroupCpuQuota q;
    ASSERT_TRUE(read("0::/user.slice/job\n", q));
    EXPECT_EQ(q.version, 2);
    EXPECT_EQ(q.quota_us, 150000);
    EXPECT_EQ(q.period_us, 100000);
    EXPECT_STREQ(q.cgroup, "/user.slice");
    EXPECT_EQ(q.periods, 9);
    EXPECT_EQ(q.throttled, 2);
    EXPECT_EQ(q.throttled_ns, 30'000'000);

    write("user.slice/cpu.max", "max 100000\n");
    EXPECT_FALSE(read("0::/user.slice/job\n", q));
}

// Hybrid: v1 controllers without cpu, v2 under unified/ with the quota.
TEST_F(CgroupTree, V2BesideV1IsReadUnderUnified) {
    write("cpuset/cpuset.effective_cpus", "0-3\n");
    write("unified/cgroup.controllers", "cpu\n");
    write("unified/box/cpu.max", "50000 100000\n");
    write("unified/box/cpu.stat", "nr_periods 4\nnr_throttled 1\nthrottled_usec 2\n");
    CgroupCpuQuota q;
    ASSERT_TRUE(read("3:cpuset:/\n0::/box\n", q));
    EXPECT_EQ(q.version, 2);
    EXPECT_EQ(q.quota_us, 50000);
    EXPECT_EQ(q.throttled_ns, 2000);
}

// Where v1 mounts cpu, v2 is not asked (its cpu.max would be empty of meaning).
TEST_F(CgroupTree, V1IsPreferredWhereItHasTheCpuController) {
    write("cpu/cpu.cfs_period_us", "100000\n");
    write("cpu/cpu.cfs_quota_us", "-1\n");
    write("unified/cgroup.controllers", "");
    write("unified/x/cpu.max", "10000 100000\n");
    CgroupCpuQuota q;
    EXPECT_FALSE(read("1:cpu:/x\n0::/x\n", q));
}

TEST_F(CgroupTree, MissingFilesAndOddTextAreNoQuota) {
    CgroupCpuQuota q;
    EXPECT_FALSE(read("1:cpu:/nothing\n", q));  // nothing mounted
    EXPECT_FALSE(read("", q));                  // no /proc text
    EXPECT_FALSE(read("garbage without colons", q));
    write("cpu/cpu.cfs_period_us", "100000\n");
    write("cpu/bad/cpu.cfs_period_us", "0\n");
    write("cpu/bad/cpu.cfs_quota_us", "50000\n");  // a period of 0: no quota
    EXPECT_FALSE(read("1:cpu:/bad\n", q));
    write("cpu/junk/cpu.cfs_period_us", "100000\n");
    write("cpu/junk/cpu.cfs_quota_us", "lots\n");
    EXPECT_FALSE(read("1:cpu:/junk\n", q));
    write("cpu/gone/cpu.cfs_quota_us", "50000\n");  // its period file is missing
    EXPECT_FALSE(read("1:cpu:/gone\n", q));
    write("cgroup.controllers", "cpu\n");
    write("v2/cpu.max", "50000\n");  // v2 without its period
    EXPECT_FALSE(read("0::/v2\n", q));
    EXPECT_FALSE(read("1:cpu:relative\n", q));  // not an absolute path
}

// A path too long for the reader's buffers is no quota, never an overrun.
TEST_F(CgroupTree, AVeryLongPathIsRefusedQuietly) {
    std::string path = "1:cpu:";
    for (int i = 0; i < 300; ++i) path += "/abcdefghij";
    CgroupCpuQuota q;
    EXPECT_FALSE(read(path + "\n", q));
}

// The end of a process re-reads only the cgroup its start found; where that
// cgroup no longer sets a quota, it walks again.
TEST_F(CgroupTree, AReReadTakesTheCgroupFoundBefore) {
    write("cpu/cpu.cfs_period_us", "100000\n");
    write("cpu/cpu.cfs_quota_us", "-1\n");
    write("cpu/job/cpu.cfs_period_us", "100000\n");
    write("cpu/job/cpu.cfs_quota_us", "50000\n");
    write("cpu/job/cpu.stat", "nr_periods 1\nnr_throttled 1\nthrottled_time 10\n");
    CgroupCpuQuota q;
    ASSERT_TRUE(read("1:cpu:/job\n", q));
    EXPECT_EQ(q.mount, (root_ / "cpu").string());
    write("cpu/job/cpu.stat", "nr_periods 9\nnr_throttled 8\nthrottled_time 70\n");
    ASSERT_TRUE(reread_cgroup_cpu_quota(q));
    EXPECT_STREQ(q.cgroup, "/job");
    EXPECT_EQ(q.periods, 9);
    EXPECT_EQ(q.throttled, 8);
    EXPECT_EQ(q.throttled_ns, 70);
    // The quota lifted: the re-read walks (here: the live machine's cgroups, whatever they hold).
    write("cpu/job/cpu.cfs_quota_us", "-1\n");
    CgroupCpuQuota live;
    const bool live_found = read_cgroup_cpu_quota(live);
    EXPECT_EQ(reread_cgroup_cpu_quota(q), live_found);
    if (!live_found) {
        EXPECT_FALSE(q.has_quota());
    }
}
