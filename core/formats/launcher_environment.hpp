// The environment variables by which a launcher or batch system tells a
// process its rank and its job: read by the recorder (each process's rank),
// by `stacksage run` (the default directory's name, whether it is one rank
// of a job) and listed in `stacksage run --help`. One list for all three.
//
// Header-only plain arrays: the recorder uses no libstdc++ runtime.
#pragma once

namespace stacksage::formats {

// A process's rank in its job, in the order they are tried: the first set
// to a number wins.
inline constexpr const char* kRankVariables[] = {
    "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "FLUX_TASK_RANK", "SLURM_PROCID",
};

// Slurm's job and step: the job id is "<job>.<step>", or "<job>" without a step.
inline constexpr const char* kSlurmJobVariable = "SLURM_JOB_ID";
inline constexpr const char* kSlurmStepVariable = "SLURM_STEP_ID";

// Slurm's facts about the job and the step a task belongs to, kept in each
// process's log (its identity): the analysis compares the nodes allocated
// and the step's nodes and tasks with the hosts and ranks that left a log,
// and the switch a node hangs under (topology/tree) with the fabric.
inline constexpr const char* kSlurmJobFactVariables[] = {
    "SLURM_JOB_NODELIST",   "SLURM_NODELIST",       "SLURM_STEP_NODELIST",       "SLURM_NTASKS",
    "SLURM_NPROCS",         "SLURM_NNODES",         "SLURM_JOB_NUM_NODES",       "SLURM_STEP_NUM_NODES",
    "SLURM_STEP_NUM_TASKS", "SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE",
    "SLURM_CPUS_ON_NODE",   "SLURMD_NODENAME",      "SLURM_TOPOLOGY_ADDR",       "SLURM_TOPOLOGY_ADDR_PATTERN",
};

// The job id under the other launchers and batch systems, in the order they
// are tried after Slurm's.
inline constexpr const char* kJobIdVariables[] = {
    "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "FLUX_JOB_ID", "PBS_JOBID", "LSB_JOBID",
};

// How many ranks the job has, as the launcher tells each of them, the most
// specific first. Slurm's counts (the step's tasks, or the allocation's)
// say so only for tasks srun started: in a process that mpirun started
// inside an allocation they count the allocation's tasks.
inline constexpr const char* kJobSizeVariables[] = {
    "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "FLUX_JOB_SIZE",
};
inline constexpr const char* kSlurmTaskCountVariables[] = {
    "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", "SLURM_NPROCS",
};

// Slurm's nodes, in its compact host-list form ("n[001-004,7]"): the job
// step's (every node of it runs at least one task) and the allocation's
// (SLURM_NODELIST is the older name of SLURM_JOB_NODELIST); and their counts.
inline constexpr const char* kSlurmStepNodeListVariable = "SLURM_STEP_NODELIST";
inline constexpr const char* kSlurmJobNodeListVariables[] = {"SLURM_JOB_NODELIST", "SLURM_NODELIST"};
inline constexpr const char* kSlurmNodeCountVariables[] = {
    "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES",
};

// The longest value of these the recorder keeps: a node list of thousands of
// scattered nodes is left out rather than crowd the process_start line.
inline constexpr unsigned kMaxIdentityValueBytes = 8192;

}  // namespace stacksage::formats
