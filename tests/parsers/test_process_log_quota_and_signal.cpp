// Reading what issue 26 added to the logs: the cgroups' CPU quota and
// throttling counters at a process's start and end, and the end a fatal
// signal's default action leaves (process_end with how "signal").
#include <gtest/gtest.h>

#include <string>

#include "parsers/process_log.hpp"

using namespace stacksage;

namespace {

const std::string kStart =
    R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"host":"n01","rank":null,"launcher":null,"exe":"/bin/app","cmdline":["/bin/app"],"cpuset":"0-1","cpu":0,"cgroup_cpuset":"0-1","online_cpus":"0-1","cpu_quota_us":50000,"cpu_period_us":100000,"cpu_quota_cgroup":"/job","cpu_periods":3,"cpu_throttled":1,"cpu_throttled_ns":5000000})"
    "\n";
const std::string kThread =
    R"({"v":1,"ev":"thread_start","t":200,"pid":7,"tid":8,"seq":1,"creator_tid":7,"cpuset":"0-1","cpu":1})"
    "\n";
const std::string kSignal =
    R"({"v":1,"ev":"signal","t":900,"pid":7,"tid":7,"signal":15,"name":"SIGTERM","disposition":"default","fatal":true,"code":0,"sender_pid":5})"
    "\n";
const std::string kUsage =
    R"({"v":1,"ev":"thread_usage_at_exit","t":901,"pid":7,"tid":7,"target_tid":8,"cpu_us":700,"duration_ns":701})"
    "\n";
const std::string kSignalEnd =
    R"({"v":1,"ev":"process_end","t":902,"pid":7,"tid":7,"how":"signal","signal":15,"utime_us":900,"stime_us":100,"nvcsw":4,"nivcsw":9,"main_cpu_us":300,"cpu_quota_us":50000,"cpu_period_us":100000,"cpu_periods":14,"cpu_throttled":12,"cpu_throttled_ns":1600000000})"
    "\n";

}  // namespace

TEST(ProcessLogQuota, ReadsTheQuotaAndCountersAtStartAndEnd) {
    auto r = parse_process_log(kStart + kThread + kSignal + kUsage + kSignalEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    const ProcessImage& p = *r;
    EXPECT_TRUE(p.quota_at_start.has_quota());
    EXPECT_EQ(p.quota_at_start.quota_us, 50000);
    EXPECT_EQ(p.quota_at_start.period_us, 100000);
    EXPECT_EQ(p.quota_at_start.periods, 3);
    EXPECT_EQ(p.quota_at_start.throttled, 1);
    EXPECT_EQ(p.quota_at_start.throttled_ns, 5'000'000);
    EXPECT_EQ(p.quota_at_end.periods, 14);
    EXPECT_EQ(p.quota_at_end.throttled, 12);
    EXPECT_EQ(p.quota_at_end.throttled_ns, 1'600'000'000);
    EXPECT_EQ(p.cpu_quota_cgroup, "/job");
}

TEST(ProcessLogQuota, LogsWithoutAQuotaHaveNone) {
    const std::string start =
        R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"host":"n01","exe":"/bin/app","cmdline":[],"cpuset":"0","cpu_quota_us":-5})"
        "\n";
    auto r = parse_process_log(start, "log");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_FALSE(r->quota_at_start.has_quota());
    EXPECT_FALSE(r->quota_at_end.has_quota());
    EXPECT_EQ(r->cpu_quota_cgroup, "");
}

// The fatal-signal path's process_end gives the figures; the signal stays
// the end: its time, its name, no exit status.
TEST(ProcessLogSignalEnd, TheSignalStaysTheEndAndTheFiguresAreKept) {
    auto r = parse_process_log(kStart + kThread + kSignal + kUsage + kSignalEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    const ProcessImage& p = *r;
    EXPECT_EQ(p.end_how, "signal SIGTERM");
    EXPECT_EQ(p.end_event, event_schema::EventKind::signal);
    EXPECT_EQ(p.end_signal, 15);
    EXPECT_EQ(p.end_t, 900);
    EXPECT_FALSE(p.exit_status.has_value());
    EXPECT_EQ(p.main_cpu_us, 300);
    EXPECT_EQ(p.utime_us, 900);
    EXPECT_EQ(p.stime_us, 100);
    EXPECT_EQ(p.nivcsw, 9);
    ASSERT_EQ(p.threads.size(), 2u);
    EXPECT_EQ(p.threads[1].utime_us, 700);
    EXPECT_TRUE(p.threads[1].cpu_time_at_exit);
    EXPECT_EQ(p.threads[1].end_t, 900);
}

// Without the signal line (lost), the signal's process_end ends the image.
TEST(ProcessLogSignalEnd, WithoutItsSignalLineTheEndNamesTheSignal) {
    auto r = parse_process_log(kStart + kThread + kUsage + kSignalEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->end_how, "signal SIGTERM");
    EXPECT_EQ(r->end_event, event_schema::EventKind::signal);
    EXPECT_EQ(r->end_signal, 15);
    EXPECT_EQ(r->end_t, 902);
    EXPECT_EQ(r->main_cpu_us, 300);
}

// Before this recorder a fatal signal left no figures at all.
TEST(ProcessLogSignalEnd, OlderLogsEndedBySignalHaveNoFigures) {
    auto r = parse_process_log(kStart + kThread + kSignal, "log");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->end_how, "signal SIGTERM");
    EXPECT_EQ(r->main_cpu_us, -1);
    EXPECT_EQ(r->threads[1].utime_us, -1);
}
