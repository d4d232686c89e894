// What the recorder keeps of a process's environment (preload/environment.hpp):
// Slurm's facts about the job and the step, which the analysis needs to tell
// which nodes and ranks of a job left no log, and nothing that could be a
// secret.
#include "preload/environment.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "core/formats/launcher_environment.hpp"

using namespace stacksage::preload;

namespace {
bool identity(const char* name) { return is_identity_variable(name, std::strlen(name)); }
bool binding(const char* name) { return is_binding_variable(name, std::strlen(name)); }
bool kept(const char* name) { return identity(name) || binding(name); }
}  // namespace

TEST(PreloadEnvironment, SlurmsJobAndStepFactsAreKept) {
    for (const char* name : {"SLURM_JOB_NODELIST",   "SLURM_NODELIST",
                             "SLURM_STEP_NODELIST",  "SLURM_NTASKS",
                             "SLURM_NNODES",         "SLURM_JOB_NUM_NODES",
                             "SLURM_STEP_NUM_TASKS", "SLURM_CPUS_PER_TASK",
                             "SLURM_CPU_BIND",       "SLURM_CPU_BIND_TYPE",
                             "SLURM_CPU_BIND_LIST",  "SLURM_CPU_BIND_VERBOSE",
                             "SLURM_TOPOLOGY_ADDR",  "SLURM_TOPOLOGY_ADDR_PATTERN",
                             "SLURMD_NODENAME",      "SLURM_PROCID",
                             "SLURM_LOCALID",        "SLURM_NODEID",
                             "SLURM_JOB_ID",         "SLURM_STEP_ID"})
        EXPECT_TRUE(kept(name)) << name;
    // The one list the analysis reads them by.
    for (const char* name : stacksage::formats::kSlurmJobFactVariables) EXPECT_TRUE(identity(name)) << name;
}

TEST(PreloadEnvironment, NamesThatOnlyStartLikeAFactAreNotKept) {
    // Exact names, not prefixes: a variable a user made up stays out.
    for (const char* name : {"SLURM_JOB_NODELIST_X", "SLURM_TOPOLOGY", "SLURM_NTASK", "SLURM_JOB_NAME",
                             "SLURM_JOB_ACCOUNT", "SLURM_SUBMIT_DIR", "MUNGE_KEY", "PATH", "HOME"})
        EXPECT_FALSE(kept(name)) << name;
    // Lengths are honoured: the name is not NUL-terminated in the environment.
    EXPECT_TRUE(is_identity_variable("SLURM_NNODES=2", 12));
    EXPECT_FALSE(is_identity_variable("SLURM_NNODES=2", 11));
}

TEST(PreloadEnvironment, SlurmsAllocationCommandsAreLaunchers) {
    // `stacksage run -- salloc -N 2 srun ./app`: salloc runs on the submit
    // host and computes nothing; it is no application process there.
    EXPECT_STREQ(launcher_name("/usr/bin/salloc", "salloc"), "salloc");
    EXPECT_STREQ(launcher_name("/usr/bin/sbatch", nullptr), "sbatch");
    EXPECT_STREQ(launcher_name("/usr/bin/srun", "srun"), "srun");
    EXPECT_EQ(launcher_name("/home/u/salloc_reader", "salloc_reader"), nullptr);
}
