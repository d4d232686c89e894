// The recorder's reading of /proc/self/cgroup (preload/proc_cgroup.hpp),
// shared by the CPU quota and the cpuset readers: the v2 line, the v1
// hierarchy of one controller, in the layouts the kernel writes.
#include <gtest/gtest.h>

#include <string>

#include "preload/proc_cgroup.hpp"

using namespace stacksage::preload;

namespace {

TEST(ProcCgroup, AV2OnlyHostHasTheZeroLineAndNoV1Hierarchy) {
    std::string text = "0::/user.slice/job_42/step_0\n";
    const CgroupPlacement p = parse_proc_cgroup(text.data(), "cpu");
    ASSERT_NE(p.v2_path, nullptr);
    EXPECT_STREQ(p.v2_path, "/user.slice/job_42/step_0");
    EXPECT_EQ(p.v1_path, nullptr);
    EXPECT_EQ(p.v1_controllers, nullptr);
}

TEST(ProcCgroup, EachControllerFindsItsOwnV1Hierarchy) {
    const std::string v1 =
        "12:cpuset:/slurm/uid_0/job_7\n"
        "4:cpu,cpuacct:/slurm/uid_0/job_7/step_0\n"
        "3:cpuacct:/acct\n"
        "1:name=systemd:/init.scope\n"
        "0::/hybrid\n";
    std::string text = v1;
    const CgroupPlacement cpu = parse_proc_cgroup(text.data(), "cpu");
    ASSERT_NE(cpu.v1_path, nullptr);
    EXPECT_STREQ(cpu.v1_path, "/slurm/uid_0/job_7/step_0");
    EXPECT_STREQ(cpu.v1_controllers, "cpu,cpuacct");
    ASSERT_NE(cpu.v2_path, nullptr);
    EXPECT_STREQ(cpu.v2_path, "/hybrid");

    text = v1;
    const CgroupPlacement cpuset = parse_proc_cgroup(text.data(), "cpuset");
    ASSERT_NE(cpuset.v1_path, nullptr);
    EXPECT_STREQ(cpuset.v1_path, "/slurm/uid_0/job_7");
    EXPECT_STREQ(cpuset.v1_controllers, "cpuset");
}

TEST(ProcCgroup, ControllerNamesMatchWhole) {
    EXPECT_TRUE(names_controller("cpu,cpuacct", "cpu"));
    EXPECT_TRUE(names_controller("cpuacct,cpu", "cpu"));
    EXPECT_FALSE(names_controller("cpuacct", "cpu"));
    EXPECT_FALSE(names_controller("cpuset", "cpu"));
    EXPECT_TRUE(names_controller("cpuset", "cpuset"));
    EXPECT_FALSE(names_controller("", "cpu"));
}

TEST(ProcCgroup, LinesWithoutTwoColonsAndEmptyTextAreIgnored) {
    std::string text = "garbage\n7:cpu\n\n";
    const CgroupPlacement p = parse_proc_cgroup(text.data(), "cpu");
    EXPECT_EQ(p.v1_path, nullptr);
    EXPECT_EQ(p.v2_path, nullptr);
    std::string empty;
    EXPECT_EQ(parse_proc_cgroup(empty.data(), "cpu").v2_path, nullptr);
}

TEST(ProcCgroup, ALineNumberedTenWithNoControllersIsNotV2) {
    std::string text = "10::/not-v2\n";
    EXPECT_EQ(parse_proc_cgroup(text.data(), "cpu").v2_path, nullptr);
}

}  // namespace
