// What the recorder reads from the environment, and what it never writes down.
//
// Environments hold secrets (tokens, passwords in URLs), so only variables
// that steer binding and placement are recorded (an allowlist), plus the
// variables by which launchers tell a process who it is in the job.
#pragma once

#include <cstddef>

namespace stacksage::preload {

// OMP_*, KMP_*, GOMP_*, MKL_*, OPENBLAS_*, GOTO_NUM_THREADS, BLIS_*,
// SLURM_CPU_BIND*, SLURM_CPUS_PER_TASK,
// OMPI_MCA_*bind*, I_MPI_PIN*, MV2_*AFFINITY*, HSA_*. `name` is not
// NUL-terminated; len is its length.
bool is_binding_variable(const char* name, std::size_t len);

// Rank and job identity set by launchers (OMPI_COMM_WORLD_RANK, PMIX_RANK,
// SLURM_PROCID, ...), Slurm's facts about the job and step (node lists, task
// and node counts, SLURM_TOPOLOGY_ADDR: formats::kSlurmJobFactVariables), and
// the tracer's own STACKSAGE_* settings.
bool is_identity_variable(const char* name, std::size_t len);

// The process's rank in its job from the first of OMPI_COMM_WORLD_RANK,
// PMIX_RANK, PMI_RANK, FLUX_TASK_RANK, SLURM_PROCID that holds a number;
// -1 when none does.
long rank_from_environment();

// The launcher this program is (mpirun, orterun, prted, srun, slurmstepd,
// hydra_pmi_proxy, ...) judged by the base names of its executable and of
// argv[0], or nullptr for an application process.
const char* launcher_name(const char* exe_path, const char* argv0);

}  // namespace stacksage::preload
