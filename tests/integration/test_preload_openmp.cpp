// OpenMP runtimes under the preload: GCC's libgomp binds its threads through
// the pthread attributes, LLVM's libomp through raw
// syscall(SYS_sched_setaffinity); both must be seen, and named as creators.
#include <gtest/gtest.h>

#include <set>

#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

TEST(PreloadOpenMP, LibgompBindsThroughTheAttributes) {
#ifndef STACKSAGE_HAVE_GOMP_EXAMPLE
    GTEST_SKIP() << "omp_gomp was not built (no OpenMP for the C compiler)";
#endif
    TempDir out;
    RunOptions o;
    o.argv = {example("omp_gomp")};
    o.output = out.path();
    o.env = {{"OMP_NUM_THREADS", "2"}, {"OMP_PROC_BIND", "close"}, {"OMP_PLACES", "threads"}};
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("team of 2"), std::string::npos) << r.out;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    EXPECT_EQ(log.start()["env"]["OMP_PROC_BIND"], "close");
    EXPECT_EQ(log.start()["env"]["OMP_PLACES"], "threads");

    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 1u);  // the master is the process's main thread
    EXPECT_EQ(base_name(starts[0]["creator_module"]), "libgomp.so.1");
    EXPECT_EQ(base_name(starts[0]["start_module"]), "libgomp.so.1");
    ASSERT_TRUE(starts[0].contains("attr_cpuset")) << starts[0].dump();
    const Cpuset attr = cpuset_of(starts[0]["attr_cpuset"]);
    EXPECT_EQ(attr.count(), 1u);
    EXPECT_EQ(cpuset_of(starts[0]["cpuset"]), attr);
    // libgomp binds the master itself with pthread_setaffinity_np.
    bool master_bound = false;
    for (const auto& a : log.all("affinity"))
        if (a["api"] == "pthread_setaffinity_np" && a["target_tid"] == log.pid()) {
            master_bound = true;
            EXPECT_EQ(base_name(a["caller_module"]), "libgomp.so.1");
            EXPECT_EQ(cpuset_of(a["cpuset"]).count(), 1u);
        }
    EXPECT_TRUE(master_bound);
}

// libgomp never joins its pool: the pool threads write no thread_end. The
// exiting main thread measures each (CPU clock; the wait for a CPU when the
// thread ran under half its life of 100 ms or more) before process_end.
TEST(PreloadOpenMP, LibgompsPoolIsMeasuredAtExit) {
#ifndef STACKSAGE_HAVE_GOMP_EXAMPLE
    GTEST_SKIP() << "omp_gomp was not built (no OpenMP for the C compiler)";
#endif
    TempDir out;
    RunOptions o;
    o.argv = {example("omp_gomp"), "0.05", "0.4"};  // 50 ms in parallel, 400 ms serial
    o.output = out.path();
    o.env = {{"OMP_NUM_THREADS", "3"}, {"OMP_WAIT_POLICY", "passive"}};
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 2u);
    EXPECT_TRUE(log.thread_ends().empty());
    auto usages = log.all("thread_usage_at_exit");
    ASSERT_EQ(usages.size(), 2u);
    std::set<std::int64_t> pool, measured;
    for (const auto& s : starts) pool.insert(s["tid"].get<std::int64_t>());
    bool process_end_seen = false;
    for (const auto& e : log.events) {
        if (e["ev"] == "process_end") process_end_seen = true;
        if (e["ev"] != "thread_usage_at_exit") continue;
        EXPECT_FALSE(process_end_seen) << "measured before the process's own end: " << e.dump();
        EXPECT_EQ(e["tid"], log.pid()) << "written by the exiting main thread";
        measured.insert(e["target_tid"].get<std::int64_t>());
        // Computed part of 50 ms, then slept (passive wait) for 400.
        EXPECT_GT(e["cpu_us"].get<std::int64_t>(), 0) << e.dump();
        EXPECT_LT(e["cpu_us"].get<std::int64_t>(), 200'000) << e.dump();
        EXPECT_GE(e["duration_ns"].get<std::int64_t>(), 400'000'000) << e.dump();
        EXPECT_TRUE(e.contains("run_delay_ns")) << e.dump();
    }
    EXPECT_EQ(measured, pool);
}

TEST(PreloadOpenMP, LlvmLibompBindsThroughTheRawSyscall) {
#ifndef STACKSAGE_HAVE_LLVM_OMP_EXAMPLE
    GTEST_SKIP() << "omp_llvm was not built (no clang with libomp)";
#endif
    TempDir out;
    RunOptions o;
    o.argv = {example("omp_llvm")};
    o.output = out.path();
    o.env = {{"OMP_NUM_THREADS", "2"}, {"KMP_AFFINITY", "granularity=fine,compact"}};
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    EXPECT_EQ(log.start()["env"]["KMP_AFFINITY"], "granularity=fine,compact");

    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(base_name(starts[0]["creator_module"]), "libomp.so.5");
    const int worker = starts[0]["tid"];
    bool worker_bound = false, master_bound = false;
    for (const auto& a : log.all("affinity")) {
        EXPECT_EQ(a["api"], "syscall") << a.dump();
        EXPECT_EQ(base_name(a["caller_module"]), "libomp.so.5");
        if (a["tid"] == worker && a["target_tid"] == worker) {
            worker_bound = true;
            EXPECT_EQ(cpuset_of(a["cpuset"]), cpuset_of(a["requested_cpuset"]));
            EXPECT_EQ(cpuset_of(a["cpuset"]).count(), 1u);
        }
        if (a["target_tid"] == log.pid()) master_bound = true;
    }
    EXPECT_TRUE(worker_bound);
    EXPECT_TRUE(master_bound);
}

}  // namespace
}  // namespace stacksage::testing
