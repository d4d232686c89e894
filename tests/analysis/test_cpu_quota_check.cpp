// The cgroup CPU quota in the analysis: cpu-quota-throttled from the
// throttling counters the recorder read at the processes' start and end,
// and the quota as the node's capacity in the reservation checks.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyzer.hpp"
#include "analysis/cpu_quota_check.hpp"
#include "analysis/node_load.hpp"
#include "tests/support/run_model_builder.hpp"

using namespace stacksage;
using stacksage::testing::RunModelBuilder;

namespace {

struct Counters {
    std::int64_t periods, throttled, throttled_ns;
};

// Sets a process's quota and the counters of its cgroup at its start and end.
void set_quota(RunModelBuilder& b, ComponentId p, std::int64_t quota_us, std::int64_t period_us,
               const std::string& cgroup, Counters start, Counters end) {
    Model& m = b.model();
    m.set_attr(p, m.key(run_keys::cpu_quota_us), quota_us);
    m.set_attr(p, m.key(run_keys::cpu_period_us), period_us);
    if (!cgroup.empty()) m.set_attr(p, m.key(run_keys::cpu_quota_cgroup), std::string_view(cgroup));
    m.set_attr(p, m.key(run_keys::cpu_periods_start), start.periods);
    m.set_attr(p, m.key(run_keys::cpu_throttled_start), start.throttled);
    m.set_attr(p, m.key(run_keys::cpu_throttled_ns_start), start.throttled_ns);
    m.set_attr(p, m.key(run_keys::cpu_periods_end), end.periods);
    m.set_attr(p, m.key(run_keys::cpu_throttled_end), end.throttled);
    m.set_attr(p, m.key(run_keys::cpu_throttled_ns_end), end.throttled_ns);
}

const Finding* find(const std::vector<Finding>& findings, FindingCode code) {
    for (const Finding& f : findings)
        if (f.code == code) return &f;
    return nullptr;
}

std::size_t count(const std::vector<Finding>& findings, FindingCode code) {
    std::size_t n = 0;
    for (const Finding& f : findings) n += f.code == code;
    return n;
}

}  // namespace

// The run: 2 OpenMP threads, a 0.5-CPU quota, throttled in 11 of 11
// periods for 1.58 s, on a node whose cpuset offers 2 cores.
TEST(CpuQuotaCheck, AThrottledQuotaIsAWarningWithItsNumbersAndRemedy) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_simple_process("n01", 100, -1, 2, Cpuset::range(0, 1));
    set_quota(b, p, 50'000, 100'000, "/job", {40, 3, 20'000'000}, {51, 14, 1'600'000'000});
    const AnalysisResult result = analyze(b.model());
    const Finding* f = find(result.findings, FindingCode::CpuQuotaThrottled);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warning);
    EXPECT_EQ(f->node, "n01");
    EXPECT_EQ(f->figure("throttled_periods"), 11);
    EXPECT_EQ(f->figure("periods"), 11);
    EXPECT_EQ(f->figure("throttled_ms"), 1580);
    EXPECT_EQ(f->figure("quota_cpus_x100"), 50);
    EXPECT_EQ(f->figure("threads"), 2);
    EXPECT_NE(f->message.find("0.5 CPU (cgroup /job)"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("11 of 11 periods, 1.58 s"), std::string::npos) << f->message;
    EXPECT_EQ(f->flow_count, 2u);
    EXPECT_NE(f->suggestion.find("OMP_NUM_THREADS=1"), std::string::npos) << f->suggestion;
    EXPECT_NE(f->suggestion.find("--cpus-per-task=2"), std::string::npos) << f->suggestion;
    EXPECT_EQ(f->remedy.threads_per_process, 1);
    // Listed first among the node's warnings.
    EXPECT_EQ(result.findings.front().code, FindingCode::CpuQuotaThrottled);
    EXPECT_EQ(result.view.nodes[0].cpu_quota, 0.5);
    EXPECT_EQ(result.nodes[0].cpu_quota, 0.5);  // for the reports' node lines
}

// The quota as the capacity: 2 threads on 2 cores fit the cpuset, not 0.5
// CPU; and the second core is no idle resource, the quota could not use it.
TEST(CpuQuotaCheck, TheQuotaIsTheCapacityOfTheReservationChecks) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_simple_process("n01", 100, -1, 2, Cpuset::range(0, 1));
    set_quota(b, p, 50'000, 100'000, "/job", {0, 0, 0}, {0, 0, 0});
    const AnalysisResult result = analyze(b.model());
    const Finding* over = find(result.findings, FindingCode::OverloadedReservation);
    ASSERT_NE(over, nullptr);
    EXPECT_NE(over->message.find("under a CPU quota of 0.5 CPU"), std::string::npos) << over->message;
    EXPECT_EQ(over->figure("quota_cpus_x100"), 50);
    EXPECT_NE(over->suggestion.find("OMP_NUM_THREADS=1"), std::string::npos) << over->suggestion;
    // Counters that did not move: no throttling to report.
    EXPECT_EQ(count(result.findings, FindingCode::CpuQuotaThrottled), 0u);

    // Without the quota the same run is fine.
    RunModelBuilder plain;
    plain.add_node("n01", 2);
    plain.add_simple_process("n01", 100, -1, 2, Cpuset::range(0, 1));
    const AnalysisResult fine = analyze(plain.model());
    EXPECT_EQ(count(fine.findings, FindingCode::OverloadedReservation), 0u);
    EXPECT_EQ(fine.view.nodes[0].cpu_quota, 0.0);

    // One thread bound to core 0 under a 1-CPU quota on 4 cores: the quota
    // is filled, the 3 other cores are not idle for lack of work; without
    // the quota they are.
    for (const bool with_quota : {true, false}) {
        RunModelBuilder one;
        one.add_node("n01", 4);
        const ComponentId q = one.add_simple_process("n01", 100, -1, 1, Cpuset::range(0, 0));
        if (with_quota) set_quota(one, q, 100'000, 100'000, "/job", {0, 0, 0}, {0, 0, 0});
        const AnalysisResult r = analyze(one.model());
        EXPECT_EQ(count(r.findings, FindingCode::IdleResources), with_quota ? 0u : 1u) << with_quota;
    }
}

// A quota no smaller than the cpuset changes nothing; one that throttled
// less than 10 ms in all is not worth a warning.
TEST(CpuQuotaCheck, LargeQuotasAndLittleThrottlingAreNotReported) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_simple_process("n01", 100, -1, 2, Cpuset::range(0, 1));
    set_quota(b, p, 400'000, 100'000, "/big", {0, 0, 0}, {100, 2, 9'000'000});
    const AnalysisResult result = analyze(b.model());
    EXPECT_EQ(result.view.nodes[0].cpu_quota, 0.0);
    EXPECT_EQ(count(result.findings, FindingCode::CpuQuotaThrottled), 0u);
    EXPECT_EQ(count(result.findings, FindingCode::OverloadedReservation), 0u);
}

// Processes of one cgroup share its counters: from the first start to the
// last end, not summed per process. Another cgroup is judged apart, and the
// node's capacity is the sum of the distinct quotas.
TEST(CpuQuotaCheck, ProcessesOfOneCgroupShareItsCounters) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    const ComponentId a = b.add_simple_process("n01", 100, 0, 1, Cpuset::range(0, 0));
    const ComponentId c = b.add_simple_process("n01", 200, 1, 1, Cpuset::range(1, 1));
    set_quota(b, a, 100'000, 100'000, "/job", {10, 1, 5'000'000}, {30, 8, 400'000'000});
    set_quota(b, c, 100'000, 100'000, "/job", {12, 2, 9'000'000}, {35, 9, 450'000'000});
    const ComponentId other = b.add_simple_process("n01", 300, 2, 1, Cpuset::range(2, 2));
    set_quota(b, other, 50'000, 100'000, "/other", {0, 0, 0}, {0, 0, 0});
    const AnalysisResult result = analyze(b.model());
    ASSERT_EQ(count(result.findings, FindingCode::CpuQuotaThrottled), 1u);
    const Finding* f = find(result.findings, FindingCode::CpuQuotaThrottled);
    EXPECT_EQ(f->figure("periods"), 25);           // 35 - 10
    EXPECT_EQ(f->figure("throttled_periods"), 8);  // 9 - 1
    EXPECT_EQ(f->figure("throttled_ms"), 445);
    EXPECT_EQ(f->figure("processes"), 2);
    EXPECT_EQ(f->figure("quota_cpus_x100"), 100);
    EXPECT_DOUBLE_EQ(result.view.nodes[0].cpu_quota, 1.5);  // /job once, /other once
}

// A node where one application process has no quota has no quota as a
// whole (that process may use every CPU); missing counters are no finding.
TEST(CpuQuotaCheck, AProcessWithoutAQuotaLeavesTheNodeUnlimited) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId a = b.add_simple_process("n01", 100, 0, 1, Cpuset::range(0, 1));
    b.add_simple_process("n01", 200, 1, 1, Cpuset::range(0, 1));
    Model& m = b.model();
    m.set_attr(a, m.key(run_keys::cpu_quota_us), std::int64_t{50'000});
    m.set_attr(a, m.key(run_keys::cpu_period_us), std::int64_t{100'000});
    const AnalysisResult result = analyze(b.model());
    EXPECT_EQ(result.view.nodes[0].cpu_quota, 0.0);
    EXPECT_EQ(count(result.findings, FindingCode::CpuQuotaThrottled), 0u);
}
