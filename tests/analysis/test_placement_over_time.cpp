// Placement that changes while threads run, and the flow-centric check over
// time (docs/analysis.md, "The load of a node"): every moment is judged with
// the mask each flow held then, and flows count only where they overlap.
#include <gtest/gtest.h>

#include "analysis/affinity_cause.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/flow_centric_check.hpp"
#include "analysis/node_load.hpp"
#include "analysis/resource_centric_check.hpp"
#include "analysis/run_view.hpp"
#include "tests/support/run_model_builder.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

const std::string kApp = "/opt/app/bin/app";

Cpuset cpus(const char* list) { return *Cpuset::parse_list(list); }

const Finding* find(const std::vector<Finding>& v, std::string_view code) {
    for (const Finding& f : v)
        if (to_string(f.code) == code) return &f;
    return nullptr;
}

// A main thread that creates its workers at `from` and joins them until
// `to`: busy only for a millisecond at each end.
void add_waiting_main(RunModelBuilder& b, ComponentId p, std::int64_t tid, const char* mask, std::int64_t from,
                      std::int64_t to) {
    b.add_flow(p, {.tid = tid, .main = true, .cpus = cpus(mask), .cpu_time_us = 2000, .waits = {{from, to, 1'000'000}}});
}

// Two threads computing free on CPUs 0-1 from 1.00 s to 2.00 s of the
// clock, then bound to CPU 0 by their own calls until 2.999 s (the
// rebind_midway example, free-first). The process lives from 1 s to 3 s.
RunModelBuilder rebound_midway() {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100, .start_ns = 1'000'000'000, .end_ns = 3'000'000'000});
    add_waiting_main(b, p, 100, "0-1", 1'001'000'000, 2'999'000'000);
    const char* apis[] = {"pthread_setaffinity_np", "sched_setaffinity"};
    for (int w = 0; w < 2; ++w)
        b.add_flow(p, {.tid = 101 + w, .creator_module = kApp,
                       .intervals = {{1'001'000'000, 2'000'000'000, cpus("0-1"), "thread_start"},
                                     {2'000'000'000, 2'999'000'000, cpus("0"), "affinity", apis[w], 101 + w, kApp}},
                       .start_ns = 1'001'000'000, .end_ns = 2'999'000'000, .cpu_time_us = 1'500'000});
    return b;
}

}  // namespace

// The view keeps every mask with what set it: the call, its caller, its module.
TEST(PlacementOverTime, TheViewKeepsEachMaskWithItsCause) {
    RunModelBuilder b = rebound_midway();
    const RunView v = build_run_view(b.model());
    ASSERT_EQ(v.flows.size(), 3u);
    const FlowView& worker = v.flows[1];
    ASSERT_EQ(worker.intervals.size(), 2u);
    EXPECT_EQ(worker.intervals[0].set_by, "thread_start");
    EXPECT_FALSE(worker.intervals[0].set_by_affinity_call());
    EXPECT_TRUE(worker.intervals[1].set_by_affinity_call());
    EXPECT_EQ(worker.intervals[1].api, "pthread_setaffinity_np");
    EXPECT_EQ(worker.intervals[1].caller_tid, 101);
    EXPECT_EQ(worker.intervals[1].caller_module, kApp);
    EXPECT_EQ(worker.intervals[1].cpuset.to_list_string(), "0");
}

// Free, then bound to one CPU: CPU 0 is over-demanded for the bound second
// only, by the two workers (not the main thread, which waited), and the
// warning names the calls that bound them.
TEST(PlacementOverTime, ThreadsThatBindThemselvesMidwayOverloadOneCpuForThatPart) {
    RunModelBuilder b = rebound_midway();
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.over_demanded.to_list_string(), "0");
    EXPECT_EQ(load.over_demanded_ns, 999'000'000);
    EXPECT_EQ(describe_over_demand(load), "50 % of the run (1.00 s of 2.00 s, from 1.00 s to 2.00 s)");
    EXPECT_EQ(load.over_demand_flows(), (std::vector<std::uint32_t>{1, 2}));

    const AnalysisResult a = analyze(b.model());
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->resources.to_list_string(), "0");
    EXPECT_EQ(f->message,
              "Cores [0] had more threads to run than they could run at once (overloaded resources) for 50 % of the "
              "run (1.00 s of 2.00 s, from 1.00 s to 2.00 s), after affinity calls: thread 101 (pid 100) bound "
              "itself to CPU 0 with pthread_setaffinity_np at 1.00 s, called from app (it had CPUs 0-1); thread 102 "
              "(pid 100) bound itself to CPU 0 with sched_setaffinity at 1.00 s, called from app (it had CPUs 0-1)");
    EXPECT_EQ(f->flow_count, 2u);
    EXPECT_EQ(f->detail.rfind("2 threads of 1 process competed for these 1 core", 0), 0u) << f->detail;
    EXPECT_EQ(f->figure("affinity_calls"), 2);
    // The flow-centric view agrees, for that second: folded into the warning.
    EXPECT_EQ(f->check, "resource-centric+flow-centric");
    EXPECT_NE(f->detail.find("2 threads of 1 process may run at once on the 1 core reserved for them (Cores [0]): "
                             "the reservation is overloaded for 1.00 s of the 2.00 s run"),
              std::string::npos)
        << f->detail;
    // The process had both cores: the calls are what to change.
    EXPECT_EQ(f->suggestion.find("Give the process"), std::string::npos) << f->suggestion;
    EXPECT_NE(f->suggestion.find("The over-subscription followed affinity calls of the program itself (thread 101"),
              std::string::npos)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("bind each of the 2 threads to a CPU of its own (2 CPUs, [0-1], were open to them)"),
              std::string::npos)
        << f->suggestion;
    EXPECT_TRUE(f->remedy.empty());
    EXPECT_EQ(find(a.findings, "idle-resources"), nullptr);
}

// Bound for 0.3 s, then free for 1.5 s: over-subscription for 17 % of the
// run, above the 5 % a moment may take, is a warning.
TEST(PlacementOverTime, ThreadsBoundAtFirstThenFreedAreWarnedForTheBoundPart) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100, .start_ns = 1'000'000'000, .end_ns = 2'800'000'000});
    add_waiting_main(b, p, 100, "0-1", 1'001'000'000, 2'799'000'000);
    for (int w = 0; w < 2; ++w)
        b.add_flow(p, {.tid = 101 + w, .creator_module = kApp,
                       .intervals = {{1'001'000'000, 1'001'100'000, cpus("0-1"), "thread_start"},
                                     {1'001'100'000, 1'301'100'000, cpus("0"), "affinity", "sched_setaffinity", 101 + w, kApp},
                                     {1'301'100'000, 2'799'000'000, cpus("0-1"), "affinity", "sched_setaffinity", 101 + w, kApp}},
                       .start_ns = 1'001'000'000, .end_ns = 2'799'000'000, .cpu_time_us = 1'650'000});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.over_demanded.to_list_string(), "0");
    EXPECT_EQ(load.over_demanded_ns, 300'000'000);
    const auto findings = check_resource_centric(v, {load});
    const Finding* f = find(findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("for 17 % of the run (0.30 s of 1.80 s, from 1 ms to 0.30 s), after affinity calls: "
                              "thread 101 (pid 100) bound itself to CPU 0 with sched_setaffinity at 1 ms"),
              std::string::npos)
        << f->message;
    EXPECT_EQ(f->flow_count, 2u);
}

// The load over time for the page: per CPU the threads that wanted it,
// averaged per bin, the busy flows, and the over-demanded window.
TEST(PlacementOverTime, TheLoadSeriesShowsWhenAndHowBadly) {
    RunModelBuilder b = rebound_midway();
    const RunView v = build_run_view(b.model());
    NodeLoadOptions options;
    options.series_bins = 20;  // 100 ms each
    const NodeLoad load = compute_node_load(v, 0, options);
    const LoadSeries& s = load.series;
    EXPECT_EQ(s.start_ns, 1'000'000'000);
    EXPECT_EQ(s.bin_ns, 100'000'000);
    ASSERT_EQ(s.bins, 20u);
    ASSERT_EQ(s.rows.size(), 2u);
    EXPECT_EQ(s.rows[0].cpus.to_list_string(), "0");
    EXPECT_TRUE(s.rows[0].over_demanded);
    EXPECT_FALSE(s.rows[1].over_demanded);
    EXPECT_NEAR(s.rows[0].demand[5], 1.0, 1e-6);   // free: two threads over two CPUs
    EXPECT_NEAR(s.rows[0].demand[15], 2.0, 1e-6);  // bound: both want CPU 0
    EXPECT_NEAR(s.rows[1].demand[15], 0.0, 1e-6);
    EXPECT_NEAR(s.busy_flows[10], 2.0, 1e-6);
    ASSERT_EQ(s.over_windows.size(), 1u);
    EXPECT_EQ(s.over_windows[0].start_ns, 2'000'000'000);
    EXPECT_EQ(s.over_windows[0].end_ns, 2'999'000'000);
}

// Algorithm 1 at each moment: two threads bound to CPU 0 for the first
// second, one other process's thread on CPU 1 for the next. The union of
// their masks over the run (2 CPUs) holds the 2 threads, yet for a second
// 2 threads had 1 CPU.
TEST(FlowCentricOverTime, ThreadsCountAgainstTheCpusTheirMasksHeldThen) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId a = b.add_process({.host = "n01", .pid = 100, .start_ns = 1'000'000'000, .end_ns = 2'000'000'000});
    b.add_flow(a, {.tid = 100, .main = true, .cpus = cpus("0"), .cpu_time_us = 1000});  // idle: service
    for (int w = 0; w < 2; ++w) b.add_flow(a, {.tid = 101 + w, .creator_module = kApp, .cpus = cpus("0")});
    const ComponentId c = b.add_process({.host = "n01", .pid = 200, .start_ns = 2'000'000'000, .end_ns = 3'000'000'000});
    b.add_flow(c, {.tid = 200, .main = true, .cpus = cpus("1")});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.crowded_ns, 1'000'000'000);
    EXPECT_EQ(load.crowded_peak_flows, 2u);
    const auto findings = check_flow_centric(v, {load});
    const Finding* f = find(findings, "overloaded-reservation");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->message,
              "2 threads of 1 process may run at once on the 1 core reserved for them (Cores [0]): the reservation "
              "is overloaded for 1.00 s of the 2.00 s run");
    EXPECT_EQ(f->resources.to_list_string(), "0");
    EXPECT_EQ(f->flow_count, 2u);
}

// A launch agent's shell and its `hostname` lived 20 ms each before the
// two ranks started: they are no ranks that need cores. The ranks' own
// over-subscription (2 threads each on 2 cores) is advised for 2
// processes, not 4.
TEST(FlowCentricOverTime, ProcessesOfMillisecondsDoNotCountAsRanks) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    for (const auto& [pid, from, exe] : {std::tuple{50, 1'000'000'000, "/bin/sh"}, std::tuple{51, 1'020'000'000, "/bin/hostname"}}) {
        const ComponentId p = b.add_process({.host = "n01", .pid = pid, .exe = exe, .start_ns = from, .end_ns = from + 20'000'000});
        b.add_flow(p, {.tid = pid, .main = true, .cpus = cpus("0-1")});
    }
    for (int rank = 0; rank < 2; ++rank) {
        const ComponentId p = b.add_process(
            {.host = "n01", .pid = 100 + 100 * rank, .rank = rank, .start_ns = 1'050'000'000, .end_ns = 3'050'000'000});
        b.add_flow(p, {.tid = 100 + 100 * rank, .main = true, .cpus = cpus("0-1")});
        b.add_flow(p, {.tid = 101 + 100 * rank, .creator_module = kApp, .cpus = cpus("0-1")});
    }
    const AnalysisResult a = analyze(b.model());
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("2 processes with up to 2 threads each computing at once needed 4 CPUs on the 2 "
                                 "cores of n01"),
              std::string::npos)
        << f->suggestion;
    EXPECT_EQ(f->suggestion.find("4 processes"), std::string::npos) << f->suggestion;
    EXPECT_NE(f->detail.find("4 threads of 2 processes may run at once"), std::string::npos) << f->detail;
    // The shell and hostname alone, before one single-threaded rank: nothing competed.
    RunModelBuilder quiet;
    quiet.add_node("n01", 2);
    for (const auto& [pid, from] : {std::pair{50, 1'000'000'000}, std::pair{51, 1'020'000'000}}) {
        const ComponentId p = quiet.add_process({.host = "n01", .pid = pid, .start_ns = from, .end_ns = from + 20'000'000});
        quiet.add_flow(p, {.tid = pid, .main = true, .cpus = cpus("0-1")});
    }
    for (int rank = 0; rank < 2; ++rank) {
        const ComponentId p = quiet.add_process(
            {.host = "n01", .pid = 100 + rank, .rank = rank, .start_ns = 1'050'000'000, .end_ns = 1'450'000'000});
        quiet.add_flow(p, {.tid = 100 + rank, .main = true, .cpus = cpus("0-1")});
    }
    const AnalysisResult q = analyze(quiet.model());
    for (const Finding& finding : q.findings) EXPECT_NE(finding.severity, Severity::Warning) << finding.message;
}

// The recorded waits reach the view as recorded (parsers keep them so);
// the view orders them and clips them to the flow's life, once.
TEST(PlacementOverTime, TheViewOrdersAndClipsTheWaitsOnce) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});  // 1 s to 11 s
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 1'000'000,
                   .waits = {{5'000'000'000, 12'000'000'000, -1},
                             {2'000'000'000, 3'000'000'000, -1},
                             {2'500'000'000, 4'000'000'000, -1},
                             {500'000'000, 1'500'000'000, -1},
                             {7'000'000'000, 6'000'000'000, -1}}});
    const RunView v = build_run_view(b.model());
    ASSERT_EQ(v.flows.size(), 1u);
    const auto& w = v.flows[0].waits;
    ASSERT_EQ(w.size(), 4u);
    EXPECT_EQ(w[0].start_ns, 1'000'000'000);
    EXPECT_EQ(w[0].end_ns, 1'500'000'000);
    EXPECT_EQ(w[1].start_ns, 2'000'000'000);
    EXPECT_EQ(w[1].end_ns, 3'000'000'000);
    EXPECT_EQ(w[2].start_ns, 3'000'000'000);
    EXPECT_EQ(w[2].end_ns, 4'000'000'000);
    EXPECT_EQ(w[3].start_ns, 5'000'000'000);
    EXPECT_EQ(w[3].end_ns, 11'000'000'000);
    EXPECT_EQ(v.flows[0].awake_ns(), 10'000'000'000 - 500'000'000 - 2'000'000'000 - 6'000'000'000);
}

// A process whose main thread computed for a few milliseconds under the
// node's whole mask before `taskset -c 1` exec'ed the program, then only
// waited, while its worker computed on CPU 1: the reservation is CPU 1 (the
// mask held for the run), so core 0 is idle, not an underloaded
// reservation of cores 0-1 (a real run under srun -c 2, tests/slurm).
TEST(PlacementOverTime, AMaskComputedUnderForMomentsBeforeExecReservesNothing) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 200, .start_ns = 1'000'000'000, .end_ns = 1'610'000'000});
    b.add_flow(p, {.tid = 200, .main = true,
                   .intervals = {{1'000'000'000, 1'006'000'000, cpus("0-1"), "process_start"},
                                 {1'006'000'000, 1'610'000'000, cpus("1"), "affinity", "sched_setaffinity", 200,
                                  "/usr/bin/taskset"}},
                   .cpu_time_us = 9000, .waits = {{1'009'000'000, 1'609'000'000, 8'000'000}}});
    b.add_flow(p, {.tid = 201, .cpus = cpus("1"), .start_ns = 1'009'000'000, .end_ns = 1'609'000'000,
                   .cpu_time_us = 600'000});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.reserved.to_list_string(), "1");
    const std::vector<Finding> flow = check_flow_centric(v, {load});
    EXPECT_EQ(find(flow, "underloaded-reservation"), nullptr);
}

// A call that widens a thread's mask (hwloc unbinding it at MPI_Init, from
// CPU 1 to the node's CPUs 0-1) is no cause of the over-subscription that
// follows: too many threads for the node are, and the advice is the
// launcher's (tests/system FollowedSuggestions.EightUnboundRanksOfTwoThreads).
TEST(PlacementOverTime, ACallThatWidensTheMaskIsNotBlamed) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 300, .start_ns = 1'000'000'000, .end_ns = 2'000'000'000});
    for (int w = 0; w < 4; ++w)
        b.add_flow(p, {.tid = 300 + w, .main = w == 0, .creator_module = kApp,
                       .intervals = {{1'000'000'000, 1'100'000'000, cpus("1"), "thread_start"},
                                     {1'100'000'000, 2'000'000'000, cpus("0-1"), "affinity", "sched_setaffinity",
                                      300 + w, "/usr/lib/x86_64-linux-gnu/libhwloc.so.15"}},
                       .start_ns = 1'000'000'000, .end_ns = 2'000'000'000, .cpu_time_us = 500'000});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    ASSERT_FALSE(load.over_demanded.empty());
    EXPECT_FALSE(affinity_causes(v, load).caused_by_calls());
}
