// Each check on hand-built run models (tests/support/run_model_builder.hpp).
#include <gtest/gtest.h>

#include <limits>

#include "analysis/activity.hpp"
#include "analysis/analyzer.hpp"
#include "analysis/binding_origin.hpp"
#include "analysis/flow_centric_check.hpp"
#include "analysis/launcher.hpp"
#include "analysis/node_load.hpp"
#include "analysis/resource_centric_check.hpp"
#include "analysis/run_view.hpp"
#include "analysis/placement_check.hpp"
#include "analysis/runtime_stacking.hpp"
#include "analysis/smt_check.hpp"
#include "analysis/temporal_stacking_check.hpp"
#include "tests/support/run_model_builder.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {
const std::string kGomp = "/usr/lib/x86_64-linux-gnu/libgomp.so.1";
const std::string kOpenPal = "/usr/lib/x86_64-linux-gnu/libopen-pal.so.40";
const std::string kMkl = "/opt/intel/lib/libmkl_gnu_thread.so.2";

Cpuset cpus(const char* list) { return *Cpuset::parse_list(list); }

const Finding* find(const std::vector<Finding>& v, std::string_view code) {
    for (const Finding& f : v)
        if (to_string(f.code) == code) return &f;
    return nullptr;
}

// Whether one of f's busy stretches overlaps [from, to).
bool busy_between(const FlowView& f, std::int64_t from, std::int64_t to) {
    for (const TimeSpan& b : f.busy)
        if (b.start_ns < to && b.end_ns > from) return true;
    return false;
}
}  // namespace

// ---- the view ----------------------------------------------------------------

TEST(RunView, ReadsNodesProcessesFlowsAndPlacement) {
    RunModelBuilder b;
    b.add_node("n01", 4, 2);  // cores 0-3, CPUs c and c+4
    const ComponentId p = b.add_process({.host = "n01", .pid = 10, .rank = 3});
    b.add_flow(p, {.tid = 10, .main = true, .cpus = cpus("0-7")});
    // Started on all CPUs for a moment, then bound to CPU 2 for the rest.
    b.add_flow(p, {.tid = 11, .creator_module = kGomp,
                   .intervals = {{1'000'000'000, 1'000'001'000, cpus("0-7")}, {1'000'001'000, 11'000'000'000, cpus("2")}}});
    const RunView v = build_run_view(b.model());
    ASSERT_EQ(v.nodes.size(), 1u);
    EXPECT_EQ(v.nodes[0].cores.size(), 4u);
    EXPECT_TRUE(v.nodes[0].smt);
    EXPECT_EQ(v.nodes[0].cores[1].to_list_string(), "1,5");
    ASSERT_EQ(v.processes.size(), 1u);
    EXPECT_EQ(v.processes[0].rank, 3);
    ASSERT_EQ(v.flows.size(), 2u);
    EXPECT_EQ(v.flows[1].intervals.size(), 2u);
    EXPECT_EQ(v.flows[1].placement.to_list_string(), "2");  // the mask held longest
    EXPECT_EQ(v.runtime_of(v.flows[1]).name, "GNU OpenMP");
    EXPECT_EQ(v.runtime_of(v.flows[0]).name, "application");
    EXPECT_EQ(describe_cpus(v.nodes[0], cpus("1,5")), "CPUs [1,5] (1 core)");
}

TEST(RuntimeClassifier, NamesKnownRuntimes) {
    EXPECT_EQ(classify_module("/lib/libgomp.so.1", "/bin/app").name, "GNU OpenMP");
    EXPECT_EQ(classify_module("/usr/lib/llvm-14/lib/libomp.so.5", "/bin/app").name, "LLVM OpenMP");
    EXPECT_EQ(classify_module("/usr/lib/libopen-pal.so.40", "/bin/app").family, RuntimeFamily::MPI);
    EXPECT_EQ(classify_module("/usr/lib/libpmix.so.2", "/bin/app").name, "PMIx");
    EXPECT_EQ(classify_module("/usr/lib/libmpich.so.12", "/bin/app").name, "MPICH");
    EXPECT_EQ(classify_module(kMkl, "/bin/app").family, RuntimeFamily::MathLibrary);
    EXPECT_EQ(classify_module("/bin/app", "/bin/app").family, RuntimeFamily::Application);
    EXPECT_EQ(classify_module("/opt/lib/libfoo.so.3", "/bin/app").name, "libfoo");
    EXPECT_EQ(classify_module("", "/bin/app").family, RuntimeFamily::Unknown);
}

// The thread pools of the BLAS libraries and TBB are runtimes, each with the
// way its thread count is set. Debian installs every build of a BLAS under
// the shared names (libblas.so.3, libblis.so.4) in a directory of its own.
TEST(RuntimeClassifier, NamesTheMathLibrariesPoolsAndTheirSettings) {
    const std::string dir = "/usr/lib/x86_64-linux-gnu/";
    EXPECT_EQ(classify_module(dir + "openblas-pthread/libblas.so.3", "/bin/app").name, "OpenBLAS");
    EXPECT_EQ(classify_module(dir + "openblas-pthread/libopenblasp-r0.3.21.so", "/bin/app").name, "OpenBLAS");
    EXPECT_EQ(classify_module(dir + "openblas-openmp/liblapack.so.3", "/bin/app").name, "OpenBLAS");
    EXPECT_EQ(classify_module(dir + "blis-pthread/libblas.so.3", "/bin/app").name, "BLIS");
    EXPECT_EQ(classify_module(dir + "blis-openmp/libblis.so.4", "/bin/app").name, "BLIS");
    EXPECT_EQ(classify_module(dir + "blas/libblas.so.3", "/bin/app").family,
              RuntimeFamily::Library);  // the reference BLAS
    EXPECT_EQ(classify_module(dir + "libtbb.so.12", "/bin/app").family, RuntimeFamily::TBB);
    EXPECT_EQ(thread_count_setting(classify_module(dir + "blis-pthread/libblis.so.4", "/bin/app")).variable,
              "BLIS_NUM_THREADS");
    EXPECT_EQ(thread_count_setting(classify_module(dir + "libopenblas.so.0", "/bin/app")).variable,
              "OPENBLAS_NUM_THREADS");
    EXPECT_EQ(thread_count_setting(classify_module(kMkl, "/bin/app")).variable, "MKL_NUM_THREADS");
    EXPECT_EQ(thread_count_setting(classify_module(kGomp, "/bin/app")).variable, "OMP_NUM_THREADS");
    const ThreadCountSetting tbb = thread_count_setting(classify_module(dir + "libtbb.so.12", "/bin/app"));
    EXPECT_TRUE(tbb.variable.empty());
    EXPECT_NE(tbb.in_the_program.find("tbb::global_control"), std::string_view::npos);
    EXPECT_NE(tbb.in_the_program.find("task_arena"), std::string_view::npos);
}

// ---- check 1: flow-centric -------------------------------------------------------

TEST(FlowCentric, TooManyThreadsForTheReservation) {
    RunModelBuilder b;
    b.add_node("n01", 4);
    b.add_simple_process("n01", 100, 0, 6, cpus("0-1"));
    const auto findings = check_flow_centric(build_run_view(b.model()));
    const Finding* f = find(findings, "overloaded-reservation");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->figure("threads"), 6);
    EXPECT_EQ(f->figure("cores"), 2);
    EXPECT_EQ(f->resources.to_list_string(), "0-1");
}

TEST(FlowCentric, TooFewThreadsForTheReservation) {
    RunModelBuilder b;
    b.add_node("n01", 16);
    b.add_simple_process("n01", 100, -1, 1, cpus("0-15"));
    const auto findings = check_flow_centric(build_run_view(b.model()));
    const Finding* f = find(findings, "underloaded-reservation");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->figure("spare_cores"), 15);
    EXPECT_NE(f->message.find("15 cores may stay idle"), std::string::npos) << f->message;
}

TEST(FlowCentric, ABalancedReservationSaysNothing) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_simple_process("n01", 100, 0, 4, cpus("0-3"));
    b.add_simple_process("n01", 200, 1, 4, cpus("4-7"));
    EXPECT_TRUE(check_flow_centric(build_run_view(b.model())).empty());
}

// ---- check 2: resource-centric ----------------------------------------------------

TEST(ResourceCentric, ThreadsSharingTheirProcessCpusetAreNotFlaggedWhenTheyFit) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_simple_process("n01", 100, 0, 8, cpus("0-7"));  // 8 unbound threads on 8 cores: fine
    EXPECT_TRUE(check_resource_centric(build_run_view(b.model())).empty());
}

TEST(ResourceCentric, ThreadsThatOutnumberTheirCpusAreOverloaded) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_simple_process("n01", 100, 0, 4, cpus("0-3"));
    b.add_simple_process("n01", 200, 1, 6, cpus("4-5"));  // 6 threads on 2 cores
    const auto findings = check_resource_centric(build_run_view(b.model()));
    const Finding* f = find(findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->resources.to_list_string(), "4-5");
    EXPECT_EQ(f->message.find("spatially concurrent"), std::string::npos);  // one process: not between processes
    EXPECT_EQ(f->flow_count, 6u);
    EXPECT_EQ(find(findings, "idle-resources")->resources.to_list_string(), "6-7");
}

TEST(ResourceCentric, ProcessesSharingCpusAreSpatiallyConcurrent) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    b.add_simple_process("n01", 100, 0, 1, cpus("0-1"));
    b.add_simple_process("n01", 200, 1, 1, cpus("0-1"));
    // 1.0 thread per CPU: shared, but nothing waits. Information, not a warning.
    const auto findings = check_resource_centric(build_run_view(b.model()));
    EXPECT_EQ(find(findings, "overloaded-resources"), nullptr);
    const Finding* f = find(findings, "shared-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Info);
    EXPECT_NE(f->message.find("spatially concurrent configuration, within capacity"), std::string::npos);
    EXPECT_EQ(f->figure("shared_cpus"), 2);
    EXPECT_EQ(f->figure("processes"), 2);
}

TEST(ResourceCentric, ProcessesSharingOverDemandedCpusAreOverloaded) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    b.add_simple_process("n01", 100, 0, 2, cpus("0-1"));
    b.add_simple_process("n01", 200, 1, 1, cpus("0-1"));  // 3 threads on 2 CPUs for the whole run
    const auto findings = check_resource_centric(build_run_view(b.model()));
    EXPECT_EQ(find(findings, "shared-resources"), nullptr);
    const Finding* f = find(findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warning);
    EXPECT_NE(f->message.find("for the whole run (10.0 s) (spatially concurrent configuration)"), std::string::npos)
        << f->message;
    EXPECT_EQ(f->figure("shared_cpus"), 2);
    EXPECT_EQ(f->figure("over_demanded_cpus"), 2);
    EXPECT_EQ(f->figure("over_demanded_ms"), 10'000);
}

TEST(ResourceCentric, ThreadsThatNeverOverlapInTimeDoNotOverload) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
    // A thousand short threads on CPU 1, one after the other.
    for (std::int64_t i = 0; i < 1000; ++i)
        b.add_flow(p, {.tid = 101 + i, .creator_module = "/opt/app/bin/app", .cpus = cpus("1"),
                       .start_ns = 1'000'000'000 + i * 5'000'000, .end_ns = 1'000'000'000 + i * 5'000'000 + 4'000'000});
    const auto findings = check_resource_centric(build_run_view(b.model()));
    EXPECT_EQ(find(findings, "overloaded-resources"), nullptr);
    EXPECT_EQ(find(findings, "idle-resources"), nullptr);
}

TEST(ResourceCentric, ANodeWithOnlyALauncherHasNoIdleWarning) {
    RunModelBuilder b;
    b.add_node("login", 4);
    const ComponentId l = b.add_process({.host = "login", .pid = 1, .launcher = "mpirun", .exe = "/usr/bin/mpirun"});
    b.add_flow(l, {.tid = 1, .main = true, .cpus = cpus("0")});
    const RunView v = build_run_view(b.model());
    EXPECT_EQ(v.nodes[0].launchers.size(), 1u);
    EXPECT_TRUE(v.nodes[0].processes.empty());
    EXPECT_TRUE(check_resource_centric(v).empty());
}

TEST(ResourceCentric, OnlyAllowedCpusOfAJobRestrictedNodeCanBeIdle) {
    RunModelBuilder b;
    b.add_node("n01", 8, 1, cpus("0-3"));  // the job was given 4 of 8 CPUs
    b.add_simple_process("n01", 100, 0, 2, cpus("0-1"));
    const RunView v = build_run_view(b.model());
    EXPECT_EQ(v.nodes[0].cores.size(), 4u);
    EXPECT_TRUE(v.nodes[0].job_restricted);
    const auto findings = check_resource_centric(v);
    ASSERT_NE(find(findings, "idle-resources"), nullptr);
    EXPECT_EQ(find(findings, "idle-resources")->resources.to_list_string(), "2-3");
}

// ---- check 3: SMT -----------------------------------------------------------------

TEST(Smt, AllCoresBusyButOneHardwareThreadEachIsInformation) {
    RunModelBuilder b;
    b.add_node("n01", 4, 2);  // CPUs 0-3 and their siblings 4-7
    for (int r = 0; r < 4; ++r) b.add_simple_process("n01", 100 + 10 * r, r, 1, cpus(std::to_string(r).c_str()));
    const RunView v = build_run_view(b.model());
    const auto smt = check_smt(v);
    const Finding* f = find(smt, "smt-unused-hardware-threads");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Info);
    EXPECT_EQ(f->resources.to_list_string(), "4-7");
    EXPECT_NE(f->message.find("All 4 cores are busy"), std::string::npos) << f->message;
    // No warning at all: the cores are used, one thread each.
    EXPECT_EQ(analyze(v).count(Severity::Warning), 0u);
}

TEST(Smt, IdleCoresStayAWarning) {
    RunModelBuilder b;
    b.add_node("n01", 4, 2);
    b.add_simple_process("n01", 100, 0, 1, cpus("0"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* idle = find(a.findings, "idle-resources");
    ASSERT_NE(idle, nullptr);
    EXPECT_EQ(idle->severity, Severity::Warning);
    EXPECT_EQ(idle->message, "CPUs [1-3,5-7] (3 cores) may stay idle during execution (underloaded resources)");
}

TEST(Smt, TwoThreadsOnTheHardwareThreadsOfOneCoreShareIt) {
    RunModelBuilder b;
    b.add_node("n01", 2, 2);  // core 0: CPUs 0,2; core 1: CPUs 1,3
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
    b.add_flow(p, {.tid = 101, .creator_module = kGomp, .cpus = cpus("2")});
    b.add_flow(p, {.tid = 102, .creator_module = kGomp, .cpus = cpus("1")});
    const auto smt = check_smt(build_run_view(b.model()));
    const Finding* f = find(smt, "smt-shared-cores");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->resources.to_list_string(), "0,2");
    EXPECT_EQ(f->figure("cores"), 1);
}

// ---- check 4: temporal stacking ------------------------------------------------------

TEST(TemporalStacking, ConcurrentRuntimesOnOverloadedCoresContend) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100, .rank = 0, .mpi = true});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0-1")});
    for (int i = 1; i <= 2; ++i) b.add_flow(p, {.tid = 100 + i, .creator_module = kGomp, .cpus = cpus("0-1")});
    for (int i = 3; i <= 4; ++i) b.add_flow(p, {.tid = 100 + i, .creator_module = kMkl, .cpus = cpus("0-1")});
    const auto findings = check_temporal_stacking(build_run_view(b.model()));
    const Finding* f = find(findings, "runtime-contention");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::Warning);
    EXPECT_NE(f->message.find("GNU OpenMP and MKL"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("temporally and spatially concurrent"), std::string::npos);
    EXPECT_EQ(f->resources.to_list_string(), "0-1");
}

TEST(TemporalStacking, RuntimesOneAfterTheOtherAreTemporallyIndependent) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0"), .cpu_time_us = 0, .busy = false});
    b.add_flow(p, {.tid = 101, .creator_module = kGomp, .cpus = cpus("0-1"), .start_ns = 1'000'000'000, .end_ns = 2'000'000'000});
    b.add_flow(p, {.tid = 102, .creator_module = kGomp, .cpus = cpus("0-1"), .start_ns = 1'000'000'000, .end_ns = 2'000'000'000});
    b.add_flow(p, {.tid = 103, .creator_module = kMkl, .cpus = cpus("0-1"), .start_ns = 3'000'000'000, .end_ns = 4'000'000'000});
    const auto findings = check_temporal_stacking(build_run_view(b.model()));
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_EQ(findings[0].code, FindingCode::RuntimeStacking);
    EXPECT_NE(findings[0].message.find("spatially concurrent, temporally independent"), std::string::npos)
        << findings[0].message;
}

TEST(TemporalStacking, RuntimesOnSeparateCoresAreSpatiallyIndependent) {
    RunModelBuilder b;
    b.add_node("n01", 4);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
    b.add_flow(p, {.tid = 101, .creator_module = kGomp, .cpus = cpus("1")});
    b.add_flow(p, {.tid = 102, .creator_module = kOpenPal, .cpus = cpus("3"), .cpu_time_us = 0, .busy = false});
    const auto findings = check_temporal_stacking(build_run_view(b.model()));
    ASSERT_EQ(findings.size(), 1u);
    EXPECT_NE(findings[0].message.find("temporally concurrent, spatially independent"), std::string::npos)
        << findings[0].message;
}

// Pairs without contention are one finding per node, however many pairs.
TEST(TemporalStacking, PairsWithoutContentionAreOneLinePerNode) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_node("n02", 8);
    for (const char* host : {"n01", "n02"}) {
        const std::int64_t pid = host[2] == '1' ? 100 : 200;
        const ComponentId p = b.add_process({.host = host, .pid = pid, .rank = pid / 100 - 1, .mpi = true});
        b.add_flow(p, {.tid = pid, .main = true, .cpus = cpus("0")});
        b.add_flow(p, {.tid = pid + 1, .creator_module = kGomp, .cpus = cpus("1")});
        b.add_flow(p, {.tid = pid + 2, .creator_module = kOpenPal, .cpus = cpus("2"), .cpu_time_us = 0, .busy = false});
        b.add_flow(p, {.tid = pid + 3,
                       .creator_module = "/usr/lib/x86_64-linux-gnu/libpmix.so.2",
                       .cpus = cpus("3"),
                       .cpu_time_us = 0,
                       .busy = false});
        b.add_flow(p, {.tid = pid + 4, .creator_module = kMkl, .cpus = cpus("4-5")});
    }
    const auto findings = check_temporal_stacking(build_run_view(b.model()));
    // 4 runtimes (GNU OpenMP, Open MPI, PMIx, MKL): 6 pairs per node, one finding each node.
    ASSERT_EQ(findings.size(), 2u);
    EXPECT_EQ(findings[0].node, "n01");
    EXPECT_EQ(findings[1].node, "n02");
    EXPECT_EQ(findings[0].figure("runtime_pairs"), 6);
    EXPECT_EQ(findings[0].message.find("Runtime pairs stacked without contention: "), 0u) << findings[0].message;
    EXPECT_NE(findings[0].message.find("GNU OpenMP and Open MPI"), std::string::npos) << findings[0].message;
    EXPECT_NE(findings[0].message.find("PMIx and MKL"), std::string::npos) << findings[0].message;
    EXPECT_EQ(findings[0].message.find('\n'), std::string::npos);
}

// ---- check 5: activity ------------------------------------------------------------

TEST(Activity, AProgressThreadIsAServiceFlowAndOverloadsNothing) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    for (int r = 0; r < 2; ++r) {
        const std::int64_t pid = 100 + 10 * r;
        const ComponentId p = b.add_process({.host = "n01", .pid = pid, .rank = r, .mpi = true});
        const Cpuset core = cpus(std::to_string(r).c_str());
        b.add_flow(p, {.tid = pid, .main = true, .cpus = core});
        // Open MPI's progress thread on the rank's core: 5 ms of CPU in 10 s.
        b.add_flow(p, {.tid = pid + 1, .creator_module = kOpenPal, .cpus = core, .cpu_time_us = 5000});
    }
    const RunView v = build_run_view(b.model());
    EXPECT_TRUE(v.flows[1].service);
    EXPECT_FALSE(v.flows[0].service);
    const AnalysisResult a = analyze(v);
    EXPECT_EQ(a.count(Severity::Warning), 0u);
    const Finding* f = find(a.findings, "service-flows");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->flow_count, 2u);
    EXPECT_NE(f->message.find("2 from Open MPI"), std::string::npos) << f->message;
}

TEST(Activity, ShortOrUnknownFlowsCountAsActive) {
    FlowView f;
    f.start_ns = 0;
    f.end_ns = 1'000'000;  // 1 ms: too short to tell
    f.cpu_time_us = 0;
    classify_activity(f);
    EXPECT_FALSE(f.service);
    f.end_ns = 10'000'000'000;
    f.cpu_time_us = -1;  // unknown
    classify_activity(f);
    EXPECT_FALSE(f.service);
    f.cpu_time_us = 100'000;  // 1 % of 10 s
    classify_activity(f);
    EXPECT_TRUE(f.service);
}

TEST(Activity, LifetimeHoldsAtTheEndsOfTheRange) {
    FlowView f;
    f.start_ns = std::numeric_limits<std::int64_t>::min();
    f.end_ns = std::numeric_limits<std::int64_t>::max();
    EXPECT_EQ(f.lifetime_ns(), std::numeric_limits<std::int64_t>::max());
    f.start_ns = -5;
    f.end_ns = 5;
    EXPECT_EQ(f.lifetime_ns(), 10);
    f.end_ns = -6;
    EXPECT_EQ(f.lifetime_ns(), 0);
    f.cpu_time_us = 1;
    classify_activity(f);  // no lifetime: unknown, active
    EXPECT_FALSE(f.service);
}

// Busy threads queued behind many others get a few % of a CPU each: they were
// waiting for one, so they are starved and count as load. Idle threads are
// service flows. Each row is one flow of 2 s (or 1 s) and what it must be.
TEST(Activity, StarvedIsToldFromServiceByWhatTheFlowAskedFor) {
    struct Case {
        const char* what;
        std::int64_t life_ms, cpu_us, voluntary, involuntary, run_delay_ms;  // -1: unknown
        const char* state;
    };
    const Case cases[] = {
        // The run delay known (the recorder reads it for threads under half a CPU):
        {"100 busy threads on 2 cores: 2 % ran, the rest waited", 1000, 20'000, 0, 7, 975, "starved"},
        {"a busy thread that blocked at barriers too, and queued", 2000, 120'000, 400, 300, 1200, "starved"},
        {"an MPI progress thread, woken often, never queued long", 2000, 40'000, 4000, 12, 3, "service"},
        {"a thread preempted often but hardly waiting: the wait decides", 2000, 40'000, 0, 500, 10, "service"},
        {"ran 6 % and waited 4 %: asked for a tenth", 2000, 120'000, 5, 50, 80, "starved"},
        // The run delay unknown (older logs, no schedstat): the switches stand in.
        {"32 busy threads on 2 cores: preempted 16 times a second", 2000, 125'000, 0, 33, -1, "starved"},
        {"100 busy threads on 2 cores: never blocked, 7 preemptions in all", 1000, 20'000, 0, 7, -1, "starved"},
        {"an MPI progress thread: blocks, rarely preempted", 2000, 125'000, 4000, 12, -1, "service"},
        {"a few bursts: preempted 2.5 times a second, blocked once", 2000, 125'000, 1, 5, -1, "service"},
        {"as many blocks as preemptions: CPU time decides", 2000, 125'000, 5, 5, -1, "service"},
        {"switches unknown too: CPU time decides", 2000, 125'000, -1, -1, -1, "service"},
        // Busy flows are active, however often preempted or long queued.
        {"busy, preempted often", 2000, 1'900'000, 0, 500, -1, "active"},
        {"busy, queued long", 2000, 1'000'000, 0, 500, 1000, "active"},
    };
    for (const Case& c : cases) {
        FlowView f;
        f.start_ns = 0;
        f.end_ns = c.life_ms * 1'000'000;
        f.cpu_time_us = c.cpu_us;
        f.voluntary_switches = c.voluntary;
        f.involuntary_switches = c.involuntary;
        f.run_delay_ns = c.run_delay_ms < 0 ? -1 : c.run_delay_ms * 1'000'000;
        classify_activity(f);
        EXPECT_EQ(activity_state(f), c.state) << c.what;
        EXPECT_EQ(f.starved, std::string_view(c.state) == "starved") << c.what;
        EXPECT_EQ(f.service, std::string_view(c.state) == "service") << c.what;
        EXPECT_NEAR(f.cpu_fraction, c.cpu_us * 1e3 / static_cast<double>(f.end_ns), 1e-9) << c.what;
    }
}

// A helper that wakes often for microseconds (PMIx, libevent) queues at each
// wake-up on a crowded node: it may "ask for" a tenth of a CPU while using
// 1 %. Its short turns on the CPU tell it from a starved compute thread, so
// the verdict does not flip with the run queue's length (issue 17, part 5:
// 1 of 8 identical runs called such a thread busy). Threads measured at exit
// have no switch counts: schedstat's count of turns stands in.
TEST(Activity, AHelperThatQueuesAtEachWakeUpIsNotStarved) {
    struct Case {
        const char* what;
        std::int64_t life_ms, cpu_us, slices, run_delay_ms;
        const char* state;
    };
    const Case cases[] = {
        {"PMIx helper on 8.5 threads per CPU: 1.2 % ran in 300 turns, queued 10 %", 1700, 20'000, 300, 170, "service"},
        {"the same helper queued 9 %: was service before too", 1700, 20'000, 300, 150, "service"},
        {"the same on a node so crowded it queued 60 % of its life", 1700, 20'000, 300, 1020, "starved"},
        {"a compute thread behind 99 others: 2 % ran, in 8 whole time slices", 1000, 20'000, 8, 975, "starved"},
        // 4 threads on 2 cores beside 3, then 6 busy processes: the
        // workers' turns end at barriers and at wake-ups of others.
        {"a GNU OpenMP worker on a crowded node: 4.5 % ran, 144 us per turn, queued 23 %", 318, 14'400, 100, 74,
         "starved"},
        {"the same worker on a node twice as crowded: 1.1 % ran, 133 us per turn, queued 19 %", 292, 3'200, 24, 55,
         "starved"},
    };
    for (const Case& c : cases) {
        FlowView f;
        f.kind = FlowKind::Thread;
        f.start_ns = 0;
        f.end_ns = c.life_ms * 1'000'000;
        f.cpu_time_us = c.cpu_us;
        f.run_slices = c.slices;
        f.run_delay_ns = c.run_delay_ms * 1'000'000;
        classify_activity(f);
        EXPECT_EQ(activity_state(f), c.state) << c.what;
    }
}

// The most common pthreads pattern: the main thread computes alone, then
// starts one worker per core and waits for them in pthread_join. Its wait
// is not load: no over-subscription, no "create at most 2 threads".
TEST(Activity, AMainThreadWaitingInJoinIsLoadOnlyBeforeItsWorkers) {
    for (const bool waits_recorded : {true, false}) {
        RunModelBuilder b;
        b.add_node("n01", 2);
        const ComponentId p = b.add_process({.host = "n01", .pid = 100});
        RunModelBuilder::FlowSpec main{.tid = 100, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 2'000'000};
        // Alone from 1 s to 3 s; the workers start at 3 s, the join 0.5 ms later.
        if (waits_recorded) main.waits = {{3'000'500'000, 11'000'000'000, 2'000'000'000}};
        b.add_flow(p, main);
        for (int w = 0; w < 2; ++w)
            b.add_flow(p, {.tid = 101 + w, .creator_module = "/opt/app/bin/app", .cpus = cpus("0-1"),
                           .start_ns = 3'000'000'000, .end_ns = 11'000'000'000});
        const RunView v = build_run_view(b.model());
        const AnalysisResult a = analyze(v);
        if (!waits_recorded) {
            // Without the waits the main thread looks busy for its whole life: the
            // false warning this test guards against.
            EXPECT_NE(find(a.findings, "overloaded-resources"), nullptr);
            continue;
        }
        ASSERT_EQ(v.flows[0].busy.size(), 1u);
        EXPECT_EQ(v.flows[0].busy[0].start_ns, 1'000'000'000);
        EXPECT_EQ(v.flows[0].busy[0].end_ns, 3'000'500'000);
        EXPECT_FALSE(v.flows[0].service);
        EXPECT_NEAR(v.flows[0].cpu_fraction, 1.0, 0.01);  // of its awake time
        EXPECT_EQ(a.count(Severity::Warning), 0u);
        EXPECT_EQ(find(a.findings, "overloaded-resources"), nullptr);
        EXPECT_EQ(find(a.findings, "overloaded-reservation"), nullptr);
    }
}

// A thread pool's main thread waits on a condition variable, which the
// recorder does not see; the CPU time it read as it created its workers
// splits its life: busy before, idle after.
TEST(Activity, ACreatorsCpuReadingSplitsItsLife) {
    for (const bool reading : {true, false}) {
        RunModelBuilder b;
        b.add_node("n01", 2);
        const ComponentId p = b.add_process({.host = "n01", .pid = 100});
        b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 2'010'000});
        for (int w = 0; w < 2; ++w) {
            const ComponentId f = b.add_flow(p, {.tid = 101 + w, .creator_module = "/opt/app/bin/app", .cpus = cpus("0-1"),
                                                 .start_ns = 3'000'000'000, .end_ns = 11'000'000'000});
            b.model().set_attr(f, b.model().key(run_keys::creator_tid), std::int64_t{100});
            if (!reading) continue;
            b.model().set_attr(f, b.model().key(run_keys::create_ns), std::int64_t{3'000'000'000});
            b.model().set_attr(f, b.model().key(run_keys::creator_cpu_ns), std::int64_t{2'000'000'000});
        }
        const RunView v = build_run_view(b.model());
        const AnalysisResult a = analyze(v);
        if (!reading) {
            EXPECT_NE(find(a.findings, "overloaded-resources"), nullptr);  // 20 % of its life: load throughout
            continue;
        }
        ASSERT_EQ(v.flows[0].cpu_readings.size(), 2u);
        ASSERT_EQ(v.flows[0].busy.size(), 1u);
        EXPECT_EQ(v.flows[0].busy[0].end_ns, 3'000'000'000);
        EXPECT_EQ(a.count(Severity::Warning), 0u) << a.findings.front().message;
    }
}

// A stretch between two CPU readings is judged on its own: a main thread
// that computed for a second and then waited (not in a recorded call) for
// nine is load for that second. A starved flow's quiet stretch stays load.
TEST(Activity, StretchesBetweenCpuReadingsAreJudgedOnTheirOwn) {
    FlowView f;
    f.kind = FlowKind::Main;
    f.start_ns = 0;
    f.end_ns = 20'000'000'000;
    f.cpu_time_us = 1'000'000;
    f.waits = {{10'000'000'000, 11'000'000'000, 1'000'000'000}};  // had 1 s of CPU when it joined at 10 s
    classify_activity(f);
    EXPECT_FALSE(f.service);
    // [0, 10 s): 10 % of a CPU, busy; [11 s, 20 s): no CPU at all, idle.
    ASSERT_EQ(f.busy.size(), 1u);
    EXPECT_EQ(f.busy[0].end_ns, 10'000'000'000);
    f.cpu_time_us = 1'000'000;
    f.waits = {{1'000'000'000, 2'000'000'000, 1'000'000'000}};
    classify_activity(f);
    EXPECT_EQ(f.busy.size(), 1u);
    EXPECT_EQ(f.busy[0].end_ns, 1'000'000'000);  // the rest used no CPU
    f.run_delay_ns = 15'000'000'000;  // but it waited 15 s for a CPU: starved, not idle
    classify_activity(f);
    EXPECT_TRUE(f.starved);
    ASSERT_EQ(f.busy.size(), 2u);
    EXPECT_EQ(f.busy[1].start_ns, 2'000'000'000);
    EXPECT_EQ(f.busy[1].end_ns, 20'000'000'000);
}

// On a crowded node a thread that got just over a tenth of a CPU in all can
// get just under it after a CPU reading: it queued for a CPU there, it did
// not idle (GNU OpenMP's main thread, 4 threads on 2 loaded cores: 11 % of
// its life, 9.9 % after it created its team, and it waited 41 % of its life
// for a CPU; the over-subscription warning counted 3 threads of 4).
TEST(Activity, ACrowdedActiveFlowsQuietStretchIsAWaitForACpu) {
    FlowView f;
    f.kind = FlowKind::Main;
    f.start_ns = 0;
    f.end_ns = 325'000'000;
    f.cpu_time_us = 35'600;
    f.run_slices = 196;
    f.cpu_readings = {{21'500'000, 5'500'000}};  // as it created its team
    auto busy_after_the_reading = [&] {
        for (const TimeSpan& b : f.busy)
            if (b.end_ns > 21'500'000) return b.start_ns <= 21'500'000 && b.end_ns == 325'000'000;
        return false;
    };
    f.run_delay_ns = 132'800'000;
    classify_activity(f);
    EXPECT_FALSE(f.starved);  // over a tenth in all: active, not starved
    EXPECT_TRUE(busy_after_the_reading());
    // The same figures without a wait for a CPU: the second stretch is quiet.
    f.run_delay_ns = 0;
    classify_activity(f);
    EXPECT_FALSE(f.service);
    EXPECT_FALSE(busy_after_the_reading());
    // A helper's wait, queued at each of thousands of short wake-ups (5 us of
    // CPU per turn) for a small part of its life, says nothing of the stretch.
    f.run_slices = 7'000;
    f.run_delay_ns = 50'000'000;
    classify_activity(f);
    EXPECT_FALSE(busy_after_the_reading());
}

// A starved creator waits for a CPU between its pthread_create calls and its
// join while the threads it started take the CPU: that wait is theirs, so
// it does not compute beside them (two srun tasks bound to one CPU each, on
// a crowded machine, counted their main thread as a third worker).
TEST(Activity, AStarvedCreatorBetweenItsCreatesAndItsJoinIsNotBusy) {
    FlowView f;
    f.kind = FlowKind::Main;
    f.start_ns = 0;
    f.end_ns = 400'000'000;
    f.cpu_time_us = 5'000;         // its start-up: 5 ms of CPU
    f.run_delay_ns = 60'000'000;   // waited 60 ms for a CPU in all
    f.involuntary_switches = 40;
    f.voluntary_switches = 2;
    // Created its threads at 50 ms and 52 ms, joined at 68 ms (0.1 ms of
    // CPU of its own in those 18 ms), woke at 390 ms.
    f.cpu_readings = {{50'000'000, 4'900'000}, {52'000'000, 4'950'000}};
    f.waits = {{68'000'000, 390'000'000, 5'000'000}};
    auto busy_between_create_and_join = [&] { return busy_between(f, 50'000'000, 68'000'000); };
    classify_activity(f);
    EXPECT_TRUE(f.starved);
    EXPECT_FALSE(f.busy.empty());  // its start-up is load
    EXPECT_FALSE(busy_between_create_and_join());
    // The same stretches with CPU use of its own (it computed a little
    // after each create) are busy.
    f.cpu_readings = {{50'000'000, 2'000'000}, {52'000'000, 3'000'000}};
    classify_activity(f);
    EXPECT_TRUE(busy_between_create_and_join());
}

// The same, however long the creator waits to reach its join: an srun task
// bound to one CPU, shared with its 2 new threads and 4 busy processes, got
// to pthread_join 29 ms after its pthread_create with 0.1 ms of CPU of its
// own, and was counted a third worker (its node's advice then differed from
// the other node's, which reached its join at once).
TEST(Activity, AStarvedCreatorThatWaitsLongForItsJoinIsNotBusyThere) {
    FlowView f;
    f.kind = FlowKind::Main;
    f.start_ns = 0;
    f.end_ns = 340'400'000;
    f.cpu_time_us = 4'000;
    f.run_delay_ns = 65'300'000;
    f.run_slices = 8;
    f.voluntary_switches = 7;
    f.involuntary_switches = 5;
    f.cpu_readings = {{37'000'000, 3'900'000}};
    f.waits = {{66'300'000, 340'300'000, 4'000'000}};
    auto busy_between_create_and_join = [&] { return busy_between(f, 37'000'000, 66'300'000); };
    classify_activity(f);
    EXPECT_TRUE(f.starved);
    EXPECT_FALSE(f.busy.empty());  // its start-up is load
    EXPECT_FALSE(busy_between_create_and_join());
    // A creator that computed 3 ms there, beside its threads, is busy there.
    f.cpu_time_us = 7'000;
    f.waits = {{66'300'000, 340'300'000, 7'000'000}};
    classify_activity(f);
    EXPECT_TRUE(busy_between_create_and_join());
}

// An overload says for how long and when, not only that it happened.
TEST(NodeLoad, AnOverloadSaysForHowLongAndWhen) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});  // 1 s to 11 s
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0-1")});
    for (int w = 0; w < 3; ++w)  // 4 busy threads on 2 cores from 5 s to 11 s
        b.add_flow(p, {.tid = 101 + w, .creator_module = "/opt/app/bin/app", .cpus = cpus("0-1"),
                       .start_ns = 5'000'000'000, .end_ns = 11'000'000'000});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.over_demanded.to_list_string(), "0-1");
    EXPECT_EQ(load.over_demanded_ns, 6'000'000'000);
    EXPECT_EQ(load.first_over_demand_ns, 5'000'000'000);
    EXPECT_EQ(load.last_over_demand_ns, 11'000'000'000);
    EXPECT_EQ(load.peak_flows, 4u);
    EXPECT_DOUBLE_EQ(load.peak_demand, 2.0);
    EXPECT_EQ(describe_over_demand(load), "60 % of the run (6.00 s of 10.0 s, from 4.00 s to 10.0 s)");
    const auto findings = check_resource_centric(v);
    const Finding* f = find(findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("for 60 % of the run"), std::string::npos) << f->message;
    EXPECT_EQ(f->figure("over_demanded_ms"), 6000);
    EXPECT_EQ(f->figure("over_demand_from_ms"), 4000);
}

// Flows busy for an instant (start == end: a thread seen only at one
// moment) start and end at the same time: no count may go below zero.
TEST(NodeLoad, InstantFlowsCountNothingAndBreakNothing) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p = b.add_process({.host = "n01", .pid = 100});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
    for (int i = 0; i < 5; ++i)
        b.add_flow(p, {.tid = 101 + i, .creator_module = "/opt/app/bin/app", .cpus = cpus("1"),
                       .start_ns = 1'000'000'000, .end_ns = 1'000'000'000});
    const RunView v = build_run_view(b.model());
    const NodeLoad load = compute_node_load(v, 0);
    EXPECT_EQ(load.peak_flows, 1u);
    EXPECT_TRUE(load.over_demanded.empty());
    ASSERT_EQ(load.process_peak_flows.size(), 1u);
    EXPECT_EQ(load.process_peak_flows[0].second, 1u);
}

// Over-demand under 5 % of the run (and 10 ms) in all is a moment, not an
// over-subscription: no warning, and the peak is what was held that long.
TEST(NodeLoad, AMomentaryOverDemandIsNotReported) {
    for (const std::int64_t extra_ms : {400, 600}) {
        RunModelBuilder b;
        b.add_node("n01", 2);
        const ComponentId p = b.add_process({.host = "n01", .pid = 100});  // 10 s
        b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0-1")});
        b.add_flow(p, {.tid = 101, .creator_module = "/opt/app/bin/app", .cpus = cpus("0-1")});
        b.add_flow(p, {.tid = 102, .creator_module = "/opt/app/bin/app", .cpus = cpus("0-1"),
                       .start_ns = 5'000'000'000, .end_ns = 5'000'000'000 + extra_ms * 1'000'000});
        const RunView v = build_run_view(b.model());
        const NodeLoad load = compute_node_load(v, 0);
        const auto findings = check_resource_centric(v, {load});
        if (extra_ms == 400) {
            EXPECT_TRUE(load.over_demanded.empty());
            EXPECT_EQ(load.peak_flows, 2u);
            EXPECT_DOUBLE_EQ(load.peak_demand, 1.0);
            EXPECT_EQ(find(findings, "overloaded-resources"), nullptr);
        } else {
            EXPECT_EQ(load.over_demanded.to_list_string(), "0-1");
            EXPECT_EQ(load.peak_flows, 3u);
            ASSERT_NE(find(findings, "overloaded-resources"), nullptr);
            EXPECT_NE(find(findings, "overloaded-resources")->message.find("6 % of the run (0.60 s of 10.0 s, from "
                                                                            "4.00 s to 4.60 s)"),
                      std::string::npos)
                << find(findings, "overloaded-resources")->message;
        }
    }
}

// ---- check 6: runtime stacking summary ------------------------------------------------

TEST(RuntimeStacking, NamesTheRuntimesAndTheCategory) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    const ComponentId mpi_omp = b.add_process({.host = "n01", .pid = 100, .rank = 0, .mpi = true});
    b.add_flow(mpi_omp, {.tid = 100, .main = true, .cpus = cpus("0-3")});
    for (int i = 1; i < 4; ++i) b.add_flow(mpi_omp, {.tid = 100 + i, .creator_module = kGomp, .cpus = cpus("0-3")});
    const ComponentId with_mkl = b.add_process({.host = "n01", .pid = 200, .rank = 1, .mpi = true});
    b.add_flow(with_mkl, {.tid = 200, .main = true, .cpus = cpus("4-7")});
    b.add_flow(with_mkl, {.tid = 201, .creator_module = kMkl, .cpus = cpus("4-7")});
    const ComponentId plain = b.add_process({.host = "n01", .pid = 300});
    b.add_flow(plain, {.tid = 300, .main = true, .cpus = cpus("0")});
    const RunView v = build_run_view(b.model());

    const RuntimeStacking s0 = summarize_runtime_stacking(v, 0);
    ASSERT_EQ(s0.runtimes.size(), 3u);
    EXPECT_EQ(s0.runtimes[0].name, "application");
    EXPECT_EQ(s0.runtimes[1].name, "GNU OpenMP");
    EXPECT_EQ(s0.runtimes[1].flows, 3u);
    EXPECT_EQ(s0.runtimes[2].name, "MPI");  // called MPI_Init, created no thread
    EXPECT_EQ(s0.runtimes[2].flows, 0u);
    EXPECT_EQ(s0.category, "explicit intra-application");
    EXPECT_EQ(summarize_runtime_stacking(v, 1).category, "explicit inter-application through a library");
    EXPECT_EQ(summarize_runtime_stacking(v, 2).category, "no runtime stacking");
}

// ---- check 7: suggestions and launchers ---------------------------------------------

TEST(Launcher, RecognisedFromLauncherProcessesOrTheRanksEnvironment) {
    {
        RunModelBuilder b;
        b.add_node("n01", 2);
        b.add_process({.host = "n01", .pid = 1, .launcher = "srun", .exe = "/usr/bin/srun"});
        EXPECT_EQ(detect_launcher(build_run_view(b.model())).kind, LauncherKind::Slurm);
    }
    {
        RunModelBuilder b;
        b.add_node("n01", 2);
        b.add_process({.host = "n01", .pid = 5, .rank = 0, .identity = {{"PMI_RANK", "0"}, {"MPI_LOCALRANKID", "0"}}});
        const LauncherInfo l = detect_launcher(build_run_view(b.model()));
        EXPECT_EQ(l.kind, LauncherKind::Mpich);
        EXPECT_EQ(l.command, "mpiexec");
    }
    {
        RunModelBuilder b;
        b.add_node("n01", 2);
        b.add_process({.host = "n01", .pid = 5});
        EXPECT_EQ(detect_launcher(build_run_view(b.model())).kind, LauncherKind::None);
    }
}

TEST(Suggestions, ComputedFromTheNumbersWithTheLauncherUsed) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_process({.host = "n01", .pid = 1, .launcher = "srun", .exe = "/usr/bin/srun"});
    // Two ranks, 8 OpenMP threads each, both unbound on the 8 cores.
    for (int r = 0; r < 2; ++r) {
        const std::int64_t pid = 100 + 100 * r;
        const ComponentId p = b.add_process({.host = "n01", .pid = pid, .rank = r, .env = {{"OMP_NUM_THREADS", "8"}}});
        b.add_flow(p, {.tid = pid, .main = true, .cpus = cpus("0-7")});
        for (int t = 1; t < 8; ++t) b.add_flow(p, {.tid = pid + t, .creator_module = kGomp, .cpus = cpus("0-7")});
    }
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("4 OpenMP threads each (OMP_NUM_THREADS was 8)"), std::string::npos)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("OMP_NUM_THREADS=4 OMP_PROC_BIND=close OMP_PLACES=cores srun --ntasks-per-node=2 "
                                 "--cpus-per-task=4 --cpu-bind=cores"),
              std::string::npos)
        << f->suggestion;
    // The same as data, for scripts and for the tests that follow it.
    EXPECT_EQ(f->remedy.processes_per_node, 2);
    EXPECT_EQ(f->remedy.threads_per_process, 4);
    EXPECT_EQ(f->remedy.cores_per_process, 4);
    EXPECT_EQ(f->remedy.launcher, "srun");
    EXPECT_EQ(f->remedy.launcher_options,
              (std::vector<std::string>{"--ntasks-per-node=2", "--cpus-per-task=4", "--cpu-bind=cores"}));
    EXPECT_EQ(f->remedy.env, (std::vector<std::pair<std::string, std::string>>{
                                 {"OMP_NUM_THREADS", "4"}, {"OMP_PROC_BIND", "close"}, {"OMP_PLACES", "cores"}}));
}

namespace {
// A rank started by mpirun (pid 1, unbound) whose program started on `start`.
void bind_by_launcher(RunModelBuilder& b, ComponentId rank, const char* start) {
    b.model().set_attr(rank, b.model().key(run_keys::ppid), std::int64_t{1});
    b.model().set_attr(rank, b.model().key(run_keys::program_start_cpuset), cpus(start));
}
}  // namespace

// Open MPI binds each rank to a core by default when np <= 2: 1 rank with 2
// OpenMP threads shares one core. The suggestion names that binding, not
// taskset, and gives the rank 2 cores; it never says "run 2 threads" to a
// run that had 2.
TEST(Suggestions, TheLaunchersDefaultBindingIsNamed) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId launcher = b.add_process({.host = "n01", .pid = 1, .launcher = "mpirun", .exe = "/usr/bin/mpirun"});
    b.add_flow(launcher, {.tid = 1, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 1000});
    const ComponentId rank = b.add_process({.host = "n01", .pid = 100, .rank = 0, .env = {{"OMP_NUM_THREADS", "2"}}});
    b.add_flow(rank, {.tid = 100, .main = true, .cpus = cpus("0")});
    b.add_flow(rank, {.tid = 101, .creator_module = kGomp, .cpus = cpus("0")});
    bind_by_launcher(b, rank, "0");
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("Rank 0 was bound by mpirun to one core by default"), std::string::npos)
        << f->suggestion;
    EXPECT_EQ(f->suggestion.find("by taskset, numactl or its parent"), std::string::npos) << f->suggestion;
    EXPECT_NE(f->suggestion.find("mpirun --map-by ppr:1:node:PE=2 --bind-to core -x OMP_NUM_THREADS=2"),
              std::string::npos)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("(or --bind-to none)"), std::string::npos) << f->suggestion;
    EXPECT_NE(f->suggestion.find("OMP_WAIT_POLICY=passive (GOMP_SPINCOUNT=0)"), std::string::npos) << f->suggestion;
    EXPECT_EQ(f->remedy.threads_per_process, 2);
    EXPECT_EQ(f->remedy.cores_per_process, 2);
    // An explicit --bind-to is the user's choice, not a default.
    b.model().set_attr(launcher, b.model().key(run_keys::cmdline), std::string_view("mpirun --bind-to core -np 1 ./app"));
    const AnalysisResult explicit_binding = analyze(build_run_view(b.model()));
    const Finding* g = find(explicit_binding.findings, "overloaded-resources");
    ASSERT_NE(g, nullptr);
    EXPECT_NE(g->suggestion.find("(the binding options given)"), std::string::npos) << g->suggestion;
}

// 8 ranks bound to one core each, 2 OpenMP threads each, on 2 cores: the
// threads of each rank are confined to its core; the fitting configuration
// keeps 2 threads per rank, 1 rank per node (or 2 ranks of 1 thread).
TEST(Suggestions, ThreadsConfinedToTheirRanksCoreAreSaidAndFitted) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId launcher = b.add_process({.host = "n01", .pid = 1, .launcher = "mpirun", .exe = "/usr/bin/mpirun"});
    b.add_flow(launcher, {.tid = 1, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 1000});
    b.model().set_attr(launcher, b.model().key(run_keys::cmdline), std::string_view("mpirun -np 8 --bind-to core ./app"));
    for (int r = 0; r < 8; ++r) {
        const std::int64_t pid = 100 + 10 * r;
        const char* core = r % 2 ? "1" : "0";
        const ComponentId p = b.add_process({.host = "n01", .pid = pid, .rank = r, .env = {{"OMP_NUM_THREADS", "2"}}});
        b.add_flow(p, {.tid = pid, .main = true, .cpus = cpus(core)});
        b.add_flow(p, {.tid = pid + 1, .creator_module = kGomp, .cpus = cpus(core)});
        bind_by_launcher(b, p, core);
    }
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("Ranks 0-7 were bound by mpirun to one core each (the binding options given): the 2 "
                                 "threads of each computing at once shared that core"),
              std::string::npos)
        << f->suggestion;
    // Two configurations fit; the one expected to be faster comes first and
    // is the remedy: ranks of 1 thread bound to cores (2 ranks x 1 thread
    // beat 1 rank x 2 threads on a real 2-rank MPI+OpenMP solver).
    EXPECT_NE(f->suggestion.find("Run 2 ranks per node with 1 OpenMP thread each (OMP_NUM_THREADS was 2): mpirun "
                                 "--map-by ppr:2:node --bind-to core -x OMP_NUM_THREADS=1, on 4 nodes for the 8 ranks"),
              std::string::npos)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("; or 1 rank per node with 2 OpenMP threads each (mpirun --map-by ppr:1:node:PE=2 "
                                 "--bind-to core -x OMP_NUM_THREADS=2 -x OMP_PROC_BIND=close -x OMP_PLACES=cores), "
                                 "on 8 nodes for the 8 ranks"),
              std::string::npos)
        << f->suggestion;
    EXPECT_LT(f->suggestion.find("ppr:2:node"), f->suggestion.find("ppr:1:node"));
    EXPECT_EQ(f->remedy.processes_per_node, 2);
    EXPECT_EQ(f->remedy.threads_per_process, 1);
    EXPECT_EQ(f->remedy.launcher_options, (std::vector<std::string>{"--map-by", "ppr:2:node", "--bind-to", "core"}));
}

TEST(Suggestions, OpenMpiBindingForAnIdleNode) {
    RunModelBuilder b;
    b.add_node("n01", 8);
    b.add_process({.host = "n01", .pid = 1, .launcher = "mpirun", .exe = "/usr/bin/mpirun"});
    b.add_simple_process("n01", 100, 0, 1, cpus("0"));
    b.add_simple_process("n01", 200, 1, 1, cpus("1"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* idle = find(a.findings, "idle-resources");
    ASSERT_NE(idle, nullptr);
    EXPECT_NE(idle->suggestion.find("mpirun --map-by ppr:2:node:PE=4 --bind-to core"), std::string::npos)
        << idle->suggestion;
    // More processes first (expected faster), then wider processes.
    EXPECT_EQ(idle->suggestion.find("Start 8 processes per node instead of 2 (mpirun --map-by ppr:8:node --bind-to "
                                    "core); or give each of the 2 ranks 4 cores and as many threads"),
              0u)
        << idle->suggestion;
    EXPECT_EQ(idle->remedy.processes_per_node, 8);
}

namespace {
// A multiprocessing pool on 2 cores: the parent (pid 100) computes alone for
// 0.3 s, forks 2 workers and then only waits for them (it reads its CPU
// time at 0.3 s, creating a helper thread, and uses 10 ms more before it
// ends); each worker computes with its main thread and one thread of
// `module` from 0.3 s to 1.5 s. `env` is every process's environment.
RunModelBuilder pool_of_workers(const std::string& module,
                                const std::vector<std::pair<std::string, std::string>>& env = {},
                                std::vector<std::int64_t> workers = {200, 300}) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const std::int64_t t0 = 1'000'000'000, fork_t = t0 + 300'000'000, end = t0 + 1'500'000'000;
    const ComponentId parent = b.add_process(
        {.host = "n01", .pid = 100, .exe = "/usr/bin/python3.11", .start_ns = t0, .end_ns = end, .env = env});
    b.add_flow(parent, {.tid = 100, .main = true, .cpus = cpus("0-1"), .cpu_time_us = 310'000});
    const ComponentId helper = b.add_flow(parent, {.tid = 101,
                                                   .creator_module = "/usr/bin/python3.11",
                                                   .cpus = cpus("0-1"),
                                                   .start_ns = fork_t,
                                                   .cpu_time_us = 100});
    Model& m = b.model();
    m.set_attr(helper, m.key(run_keys::creator_tid), std::int64_t{100});
    m.set_attr(helper, m.key(run_keys::create_ns), fork_t);
    m.set_attr(helper, m.key(run_keys::creator_cpu_ns), std::int64_t{300'000'000});
    for (std::int64_t pid : workers) {
        const ComponentId w = b.add_process(
            {.host = "n01", .pid = pid, .exe = "/usr/bin/python3.11", .start_ns = fork_t, .end_ns = end, .env = env});
        b.add_flow(w, {.tid = pid, .main = true, .cpus = cpus("0-1")});
        b.add_flow(w, {.tid = pid + 1, .creator_module = module, .cpus = cpus("0-1")});
    }
    return b;
}
}  // namespace

// The pool's workers are the demand, not its parent, which only waited: 2
// processes of 2 threads, not "3 processs ... 6 CPUs". The fix is the BLAS
// library's own variable, not one process for all the work.
TEST(Suggestions, APoolOfBlasWorkersIsToldTheLibrarysVariable) {
    RunModelBuilder b = pool_of_workers("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3");
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->suggestion.find("processs"), std::string::npos) << f->suggestion;
    EXPECT_EQ(f->suggestion.find("2 processes with up to 2 threads each computing at once needed 4 CPUs on the 2 "
                                 "cores of n01. Run 1 OpenBLAS thread in each of the 2 processes "
                                 "(OPENBLAS_NUM_THREADS was unset: one thread per CPU the process may use): "
                                 "OPENBLAS_NUM_THREADS=1"),
              0u)
        << f->suggestion;
    EXPECT_EQ(f->remedy.env, (std::vector<std::pair<std::string, std::string>>{{"OPENBLAS_NUM_THREADS", "1"}}));
    EXPECT_EQ(f->remedy.threads_per_process, 1);
    EXPECT_EQ(f->remedy.processes_per_node, 2);
    EXPECT_EQ(a.view.flows[0].busy.size(), 1u);  // the parent computed before the fork only
    EXPECT_EQ(a.view.flows[0].busy[0].end_ns, 1'300'000'000);
    // A pool of 3 on 2 cores: 2 processes of 1 thread; no launcher can be
    // told to start fewer, and the threads that ran are not offered again.
    RunModelBuilder three =
        pool_of_workers("/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3", {}, {200, 300, 400});
    const AnalysisResult t = analyze(build_run_view(three.model()));
    const Finding* g = find(t.findings, "overloaded-resources");
    ASSERT_NE(g, nullptr);
    EXPECT_NE(g->suggestion.find("3 processes with up to 2 threads each computing at once needed 6 CPUs on the 2 cores "
                                 "of n01. Run 2 processes (not 3) with 1 OpenBLAS thread each (OPENBLAS_NUM_THREADS "
                                 "was unset: one thread per CPU the process may use): OPENBLAS_NUM_THREADS=1"),
              std::string::npos)
        << g->suggestion;
    EXPECT_EQ(g->suggestion.find("; or"), std::string::npos) << g->suggestion;
}

// BLIS built with OpenMP: libgomp creates the threads, and BLIS_NUM_THREADS,
// which the run set, overrides OMP_NUM_THREADS: both are in the remedy.
TEST(Suggestions, AnOpenMpBuildOfABlasIsToldBothVariables) {
    RunModelBuilder b = pool_of_workers(kGomp, {{"BLIS_NUM_THREADS", "2"}});
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("(OMP_NUM_THREADS was unset: one thread per CPU the process may use, "
                                 "BLIS_NUM_THREADS was 2): OMP_NUM_THREADS=1 BLIS_NUM_THREADS=1"),
              std::string::npos)
        << f->suggestion;
    EXPECT_EQ(f->remedy.env,
              (std::vector<std::pair<std::string, std::string>>{{"OMP_NUM_THREADS", "1"}, {"BLIS_NUM_THREADS", "1"}}));
}

// TBB reads no variable: the advice says what works in the program, and the
// remedy is the thread count.
TEST(Suggestions, TbbIsToldWhatWorksInTheProgram) {
    RunModelBuilder b = pool_of_workers("/usr/lib/x86_64-linux-gnu/libtbb.so.12");
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->suggestion.find("Run 1 TBB thread in each of the 2 processes (TBB reads no variable for its thread "
                                 "count: limit it in the program with "
                                 "tbb::global_control(tbb::global_control::max_allowed_parallelism, 1), or run the "
                                 "work in a tbb::task_arena(1))"),
              std::string::npos)
        << f->suggestion;
    EXPECT_TRUE(f->remedy.env.empty());
    EXPECT_EQ(f->remedy.threads_per_process, 1);
}

// What the recorded environment shows applied is never advised.
TEST(Suggestions, SpinWaitAdviceIsNotGivenWhereApplied) {
    for (const auto& env : std::vector<std::vector<std::pair<std::string, std::string>>>{
             {{"OMP_NUM_THREADS", "2"}, {"OMP_WAIT_POLICY", "passive"}, {"GOMP_SPINCOUNT", "0"}},
             {{"OMP_NUM_THREADS", "2"}, {"OMP_WAIT_POLICY", "PASSIVE"}},
             {{"OMP_NUM_THREADS", "2"}, {"GOMP_SPINCOUNT", "0"}},
             {{"OMP_NUM_THREADS", "2"}}}) {
        RunModelBuilder b;
        b.add_node("n01", 2);
        const ComponentId p = b.add_process({.host = "n01", .pid = 100, .env = env});
        b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
        b.add_flow(p, {.tid = 101, .creator_module = kGomp, .cpus = cpus("0")});
        b.model().set_attr(p, b.model().key(run_keys::program_start_cpuset), cpus("0"));
        const AnalysisResult a = analyze(build_run_view(b.model()));
        const Finding* f = find(a.findings, "overloaded-resources");
        ASSERT_NE(f, nullptr);
        const bool applied = env.size() > 1;
        EXPECT_EQ(f->suggestion.find("OMP_WAIT_POLICY=passive") == std::string::npos, applied)
            << env.size() << ": " << f->suggestion;
    }
}

// Under Slurm the task's parent (slurmstepd) is not recorded: the binding
// is named from what task/affinity left in the task's environment, with
// the srun options that change it, never "taskset, numactl or its parent".
TEST(Suggestions, SlurmsBindingIsNamedWithTheSrunOptions) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId p =
        b.add_process({.host = "n01",
                       .pid = 100,
                       .rank = 0,
                       .env = {{"OMP_NUM_THREADS", "2"},
                               {"SLURM_CPU_BIND", "quiet,mask_cpu:0x1"},
                               {"SLURM_CPU_BIND_TYPE", "mask_cpu:"},
                               {"SLURM_CPU_BIND_LIST", "0x1"}},
                       .identity = {{"SLURM_PROCID", "0"}, {"SLURM_STEP_ID", "0"}, {"SLURM_JOB_ID", "42"}}});
    b.add_flow(p, {.tid = 100, .main = true, .cpus = cpus("0")});
    b.add_flow(p, {.tid = 101, .creator_module = kGomp, .cpus = cpus("0")});
    b.model().set_attr(p, b.model().key(run_keys::ppid), std::int64_t{77});  // slurmstepd, not recorded
    b.model().set_attr(p, b.model().key(run_keys::program_start_cpuset), cpus("0"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    ASSERT_EQ(a.launcher.kind, LauncherKind::Slurm);
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->suggestion.find("taskset"), std::string::npos) << f->suggestion;
    EXPECT_EQ(f->suggestion.find("Rank 0 was bound by srun to one core (Slurm's task/affinity binding: "
                                 "SLURM_CPU_BIND=quiet,mask_cpu:0x1; SLURM_CPUS_PER_TASK unset: 1 CPU per task; srun "
                                 "--cpus-per-task=N gives each task N CPUs, --cpu-bind=cores|none changes the "
                                 "binding): its 2 threads computing at once shared that core"),
              0u)
        << f->suggestion;
    EXPECT_NE(f->suggestion.find("srun --ntasks-per-node=1 --cpus-per-task=2 --cpu-bind=cores (or --cpu-bind=none)"),
              std::string::npos)
        << f->suggestion;
    EXPECT_EQ(f->remedy.launcher_options,
              (std::vector<std::string>{"--ntasks-per-node=1", "--cpus-per-task=2", "--cpu-bind=cores"}));
    // With --cpu-bind=none Slurm leaves the task unbound: nothing to name.
    RunModelBuilder unbound;
    unbound.add_node("n01", 2);
    const ComponentId q = unbound.add_process({.host = "n01", .pid = 100, .env = {{"SLURM_CPU_BIND_TYPE", "none"}}});
    unbound.add_flow(q, {.tid = 100, .main = true, .cpus = cpus("0")});
    unbound.model().set_attr(q, unbound.model().key(run_keys::program_start_cpuset), cpus("0"));
    const RunView v = build_run_view(unbound.model());
    EXPECT_EQ(binding_origin(v, v.processes[0]).source, BindingSource::Inherited);
}

// Advice followed converges: too few threads for the cores is fixed by
// more threads (the remedy), never by a narrower binding, which would leave
// cores idle (idle-resources), whose advice is the same fixed point.
TEST(Suggestions, AdviceForTooFewThreadsConverges) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    b.add_simple_process("n01", 100, -1, 1, cpus("0-1"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    const Finding* under = find(a.findings, "underloaded-reservation");
    ASSERT_NE(under, nullptr);
    EXPECT_EQ(under->suggestion.find("taskset -c"), std::string::npos) << under->suggestion;
    EXPECT_EQ(under->remedy.threads_per_process, 2) << under->suggestion;
    // The same process restricted to one core (what "taskset -c" gave):
    // idle-resources, whose remedy is the same 2 threads on 2 cores.
    RunModelBuilder narrowed;
    narrowed.add_node("n01", 2);
    const ComponentId p = narrowed.add_simple_process("n01", 100, -1, 1, cpus("0"));
    narrowed.model().set_attr(p, narrowed.model().key(run_keys::program_start_cpuset), cpus("0"));
    const AnalysisResult n = analyze(build_run_view(narrowed.model()));
    const Finding* idle = find(n.findings, "idle-resources");
    ASSERT_NE(idle, nullptr);
    EXPECT_EQ(idle->remedy.threads_per_process, 2) << idle->suggestion;
    EXPECT_EQ(idle->remedy.cores_per_process, 2) << idle->suggestion;
    // And the fixed point is clean.
    RunModelBuilder fixed;
    fixed.add_node("n01", 2);
    fixed.add_simple_process("n01", 100, -1, 2, cpus("0-1"));
    for (const Finding& f : analyze(build_run_view(fixed.model())).findings)
        EXPECT_EQ(f.severity, Severity::Info) << f.message;
}

// ---- the analyzer -----------------------------------------------------------------

TEST(Analyzer, ReportsAnOverloadOnceWithBothAlgorithmsNumbers) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    b.add_simple_process("n01", 100, -1, 4, cpus("0-1"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    EXPECT_EQ(a.count(Severity::Warning), 1u);
    EXPECT_EQ(find(a.findings, "overloaded-reservation"), nullptr);
    const Finding* f = find(a.findings, "overloaded-resources");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->check, "resource-centric+flow-centric");
    EXPECT_NE(f->suggestion.find("OMP_NUM_THREADS=2"), std::string::npos) << f->suggestion;
}

TEST(Analyzer, LaunchersAreShownButNotChecked) {
    RunModelBuilder b;
    b.add_node("n01", 2);
    const ComponentId l = b.add_process({.host = "n01", .pid = 1, .launcher = "mpirun", .exe = "/usr/bin/mpirun"});
    for (int t = 0; t < 6; ++t) b.add_flow(l, {.tid = 1 + t, .main = t == 0, .cpus = cpus("0-1")});
    b.add_simple_process("n01", 100, 0, 1, cpus("0"));
    b.add_simple_process("n01", 200, 1, 1, cpus("1"));
    const AnalysisResult a = analyze(build_run_view(b.model()));
    EXPECT_EQ(a.count(Severity::Warning), 0u);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].launchers.size(), 1u);
    EXPECT_EQ(a.nodes[0].processes.size(), 2u);
    EXPECT_TRUE(a.processes[a.nodes[0].launchers[0]].launcher);
}

// Where threads ran (cpu-clock RanOn paths) against where they were allowed.
TEST(Placement, ThreadsSeenOutsideTheirMasksAndMigratingThreads) {
    RunModelBuilder b;
    b.add_node("n01", 4);
    Model& m = b.model();
    const ComponentId p = b.add_simple_process("n01", 100, 0, 3, cpus("0-1"));
    const std::vector<ComponentId> flows = m.children(p);
    ASSERT_EQ(flows.size(), 3u);
    auto ran_on = [&](ComponentId flow, unsigned cpu) {
        const DataPathId dp = m.add_datapath(flow, m.find(ComponentType::Thread, cpu), DataPathType::RanOn);
        m.set_attr(dp, keys::count, std::int64_t{10});
    };
    const AttrKey migrations = m.key("migrations");
    // Thread 1 stayed within its mask but moved between CPUs 0 and 1 often.
    ran_on(flows[1], 0);
    ran_on(flows[1], 1);
    m.set_attr(flows[1], migrations, std::int64_t{7});
    // Thread 2 was sampled on CPU 3: no recorded mask of its allowed that.
    ran_on(flows[2], 1);
    ran_on(flows[2], 3);
    m.set_attr(flows[2], migrations, std::int64_t{1});
    // The main thread's only RanOn is its last CPU (not sampled): not judged.
    ran_on(flows[0], 2);
    const RunView v = build_run_view(m);
    const auto found = check_placement(v, detect_launcher(v));
    const Finding* outside = find(found, "ran-outside-affinity");
    ASSERT_NE(outside, nullptr);
    EXPECT_EQ(outside->severity, Severity::Warning);
    EXPECT_EQ(outside->resources.to_list_string(), "3");
    EXPECT_EQ(outside->flow_count, 1u);
    const Finding* moved = find(found, "thread-migrations");
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(moved->severity, Severity::Info);
    EXPECT_EQ(moved->figure("migrations"), 7);
    EXPECT_NE(moved->suggestion.find("OMP_PROC_BIND=close"), std::string::npos) << moved->suggestion;
    // And the analyzer runs the check.
    EXPECT_NE(find(analyze(v).findings, "ran-outside-affinity"), nullptr);
}

TEST(Placement, NoSamplesNoFindings) {
    RunModelBuilder b;
    b.add_node("n01", 4);
    b.add_simple_process("n01", 100, 0, 2, cpus("0-1"));
    const RunView v = build_run_view(b.model());
    EXPECT_TRUE(check_placement(v, detect_launcher(v)).empty());
}
