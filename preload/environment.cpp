#include "preload/environment.hpp"

#include <cstdlib>
#include <cstring>

#include "core/formats/launcher_environment.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

bool starts_with(const char* s, std::size_t len, const char* prefix) {
    std::size_t n = std::strlen(prefix);
    return len >= n && std::memcmp(s, prefix, n) == 0;
}

bool contains(const char* s, std::size_t len, const char* part) {
    std::size_t n = std::strlen(part);
    for (std::size_t i = 0; i + n <= len; ++i)
        if (std::memcmp(s + i, part, n) == 0) return true;
    return false;
}

bool equals(const char* s, std::size_t len, const char* word) {
    return std::strlen(word) == len && std::memcmp(s, word, len) == 0;
}

const char* base_name(const char* path) {
    if (path == nullptr) return "";
    const char* slash = std::strrchr(path, '/');
    return slash ? slash + 1 : path;
}

}  // namespace

bool is_binding_variable(const char* name, std::size_t len) {
    // The math libraries' thread pools are runtimes too (their counts:
    // OPENBLAS_NUM_THREADS, GOTO_NUM_THREADS, BLIS_NUM_THREADS and BLIS's
    // per-loop BLIS_*_NT, MKL_NUM_THREADS); Slurm's task/affinity binding
    // is in SLURM_CPU_BIND* and SLURM_CPUS_PER_TASK.
    static const char* const kPrefixes[] = {"OMP_",  "KMP_",           "GOMP_",     "MKL_", "OPENBLAS_",
                                            "BLIS_", "SLURM_CPU_BIND", "I_MPI_PIN", "HSA_"};
    for (const char* p : kPrefixes)
        if (starts_with(name, len, p)) return true;
    if (equals(name, len, "SLURM_CPUS_PER_TASK") || equals(name, len, "GOTO_NUM_THREADS")) return true;
    if (starts_with(name, len, "OMPI_MCA_") && contains(name, len, "bind")) return true;
    if (starts_with(name, len, "MV2_") && contains(name, len, "AFFINITY")) return true;
    return false;
}

bool is_identity_variable(const char* name, std::size_t len) {
    // The variables that give a rank or a job id (one list with `stacksage
    // run`, core/formats/launcher_environment.hpp), and those that say more
    // about a process's place in its job.
    for (const char* n : formats::kRankVariables)
        if (equals(name, len, n)) return true;
    for (const char* n : formats::kJobIdVariables)
        if (equals(name, len, n)) return true;
    if (equals(name, len, formats::kSlurmJobVariable) || equals(name, len, formats::kSlurmStepVariable)) return true;
    for (const char* n : formats::kSlurmJobFactVariables)
        if (equals(name, len, n)) return true;
    // The job's size and nodes: what the analyzer checks the recorded ranks
    // and hosts against.
    for (const char* n : formats::kJobSizeVariables)
        if (equals(name, len, n)) return true;
    for (const char* n : formats::kSlurmTaskCountVariables)
        if (equals(name, len, n)) return true;
    for (const char* n : formats::kSlurmJobNodeListVariables)
        if (equals(name, len, n)) return true;
    for (const char* n : formats::kSlurmNodeCountVariables)
        if (equals(name, len, n)) return true;
    if (equals(name, len, formats::kSlurmStepNodeListVariable)) return true;
    static const char* const kPlaceInTheJob[] = {
        "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK",
        "SLURM_LOCALID", "SLURM_NODEID", "FLUX_TASK_LOCAL_ID", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
    };
    for (const char* n : kPlaceInTheJob)
        if (equals(name, len, n)) return true;
    return starts_with(name, len, "STACKSAGE_");
}

long rank_from_environment() {
    for (const char* name : formats::kRankVariables) {
        const char* v = std::getenv(name);
        if (v == nullptr || *v == '\0') continue;
        std::uint64_t r = 0;
        const char* p = v;
        if (read_decimal(p, 999'999'999, r) && *p == '\0') return static_cast<long>(r);
    }
    return -1;
}

const char* launcher_name(const char* exe_path, const char* argv0) {
    static const char* const kLaunchers[] = {
        "mpirun",         "mpiexec",         "orterun",        "prterun",
        "prte",           "prted",           "orted",          "srun",
        "slurmstepd",     "hydra_pmi_proxy", "mpiexec.hydra",  "mpirun.openmpi",
        "mpiexec.openmpi", "mpirun.mpich",   "mpiexec.mpich",  "mpiexec.slurm",
        "salloc",         "sbatch",
    };
    const char* candidates[] = {base_name(exe_path), base_name(argv0)};
    for (const char* c : candidates)
        for (const char* l : kLaunchers)
            if (std::strcmp(c, l) == 0) return l;
    return nullptr;
}

}  // namespace stacksage::preload
