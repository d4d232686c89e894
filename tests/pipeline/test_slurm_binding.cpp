// Slurm's binding named from what task/affinity leaves in each task's
// environment: `srun -N 2 -n 2 ./app` on a real Slurm gives one task per
// node, bound by slurmstepd (which the recorder does not see: slurmd starts
// it, not the job) to the one CPU a task gets unless --cpus-per-task says
// more. Synthetic runs written as the preload would (event logs with the
// recorded SLURM_CPU_BIND* variables), through the loader, the checks and
// the terminal report: this machine has no Slurm.
#include <gtest/gtest.h>

#include "tests/support/analysed_run.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

// One task per node of 2 cores, 2 OpenMP threads, bound to core 0 by
// task/affinity as `env` says.
ReportedRun two_nodes_one_task_each(const std::map<std::string, std::string>& env) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["srun","-N","2","-n","2","./app"])");
    for (int rank = 0; rank < 2; ++rank) {
        const std::string host = rank == 0 ? "n01" : "n02";
        run.add_host(host, "pack:1 core:2 pu:1");
        SyntheticProcess p = busy_process(host, 7000 + rank, rank, 2, "0");
        p.env = env;
        p.env["OMP_NUM_THREADS"] = "2";
        p.identity = {{"SLURM_PROCID", std::to_string(rank)}, {"SLURM_JOB_ID", "42"}, {"SLURM_STEP_ID", "0"}};
        run.add_process(p);
    }
    return report_of(dir.str());
}

}  // namespace

TEST(SlurmBinding, SrunsTaskAffinityIsNamedWithTheOptionsThatChangeIt) {
    const ReportedRun r = two_nodes_one_task_each({{"SLURM_CPU_BIND", "quiet,mask_cpu:0x1"},
                                              {"SLURM_CPU_BIND_TYPE", "mask_cpu:"},
                                              {"SLURM_CPU_BIND_LIST", "0x1"},
                                              {"SLURM_CPU_BIND_VERBOSE", "quiet"}});
    EXPECT_EQ(r.analysis.launcher.kind, LauncherKind::Slurm);
    EXPECT_EQ(r.text.find("taskset"), std::string::npos) << r.text;
    // Both nodes get the same advice for their own rank: one group, its
    // rank a range (analysis/node_groups).
    EXPECT_NE(r.text.find("+ Nodes n[01-02] (2 nodes, ranks 0-1)"), std::string::npos) << r.text;
    EXPECT_NE(r.text.find("suggestion: Ranks 0\u20131 were bound by srun to one core (Slurm's task/affinity binding: "
                          "SLURM_CPU_BIND=quiet,mask_cpu:0x1; SLURM_CPUS_PER_TASK unset: 1 CPU per task; srun "
                          "--cpus-per-task=N gives each task N CPUs, --cpu-bind=cores|none changes the binding): "
                          "its 2 threads computing at once shared that core. Give the rank 2 cores: "
                          "OMP_NUM_THREADS=2 OMP_PROC_BIND=close OMP_PLACES=cores srun --ntasks-per-node=1 "
                          "--cpus-per-task=2 --cpu-bind=cores (or --cpu-bind=none)"),
              std::string::npos)
        << r.text;
    // The idle core's advice is the same fixed point, in the same words.
    EXPECT_NE(r.text.find("Give the rank 2 cores and as many threads: OMP_NUM_THREADS=2 OMP_PROC_BIND=close "
                          "OMP_PLACES=cores srun --ntasks-per-node=1 --cpus-per-task=2 --cpu-bind=cores"),
              std::string::npos)
        << r.text;
}

TEST(SlurmBinding, CpusPerTaskIsSaidAsRecorded) {
    const ReportedRun r = two_nodes_one_task_each({{"SLURM_CPU_BIND", "quiet,mask_cpu:0x1"}, {"SLURM_CPUS_PER_TASK", "1"}});
    EXPECT_NE(r.text.find("(Slurm's task/affinity binding: SLURM_CPU_BIND=quiet,mask_cpu:0x1; SLURM_CPUS_PER_TASK=1; "),
              std::string::npos)
        << r.text;
}

// Without Slurm's variables the same narrow start is taskset's, numactl's
// or the parent's: that is all the recorder can tell.
TEST(SlurmBinding, WithoutItsVariablesTheParentIsBlamed) {
    const ReportedRun r = two_nodes_one_task_each({});
    EXPECT_EQ(r.text.find("srun to one core"), std::string::npos) << r.text;
}
