// OpenMP runtimes under the preload: GCC's libgomp binds its threads through
// the pthread attributes, LLVM's libomp through raw
// syscall(SYS_sched_setaffinity); both must be seen, and named as creators.
#include <gtest/gtest.h>

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
