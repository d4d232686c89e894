#include "analysis/launcher.hpp"

#include <array>

namespace stacksage {

std::string_view to_string(LauncherKind kind) {
    switch (kind) {
        case LauncherKind::None: return "none";
        case LauncherKind::OpenMPI: return "Open MPI";
        case LauncherKind::Mpich: return "MPICH (Hydra)";
        case LauncherKind::Slurm: return "Slurm";
        case LauncherKind::Other: return "other";
    }
    return "none";
}

namespace {

struct Known {
    std::string_view name;
    LauncherKind kind;
    std::string_view command;  // what to tell the user to type
};

constexpr std::array<Known, 18> kKnown = {{
    {"mpirun", LauncherKind::OpenMPI, "mpirun"},
    {"mpiexec", LauncherKind::OpenMPI, "mpiexec"},
    {"orterun", LauncherKind::OpenMPI, "mpirun"},
    {"prterun", LauncherKind::OpenMPI, "mpirun"},
    {"prte", LauncherKind::OpenMPI, "mpirun"},
    {"prted", LauncherKind::OpenMPI, "mpirun"},
    {"orted", LauncherKind::OpenMPI, "mpirun"},
    {"mpirun.openmpi", LauncherKind::OpenMPI, "mpirun"},
    {"mpiexec.openmpi", LauncherKind::OpenMPI, "mpiexec"},
    {"hydra_pmi_proxy", LauncherKind::Mpich, "mpiexec"},
    {"mpiexec.hydra", LauncherKind::Mpich, "mpiexec"},
    {"mpirun.mpich", LauncherKind::Mpich, "mpirun"},
    {"mpiexec.mpich", LauncherKind::Mpich, "mpiexec"},
    {"srun", LauncherKind::Slurm, "srun"},
    {"slurmstepd", LauncherKind::Slurm, "srun"},
    {"mpiexec.slurm", LauncherKind::Slurm, "srun"},
    {"salloc", LauncherKind::Slurm, "srun"},
    {"sbatch", LauncherKind::Slurm, "srun"},
}};

const Known* find_known(std::string_view name) {
    for (const Known& k : kKnown)
        if (k.name == name) return &k;
    return nullptr;
}

// Rank of evidence: a launcher the user typed beats a daemon it started.
int strength(std::string_view name) {
    return name == "prted" || name == "orted" || name == "hydra_pmi_proxy" || name == "slurmstepd" ? 1 : 2;
}

}  // namespace

LauncherInfo detect_launcher(const RunView& view) {
    LauncherInfo best;
    int best_strength = 0;
    for (const ProcessView& p : view.processes) {
        if (!p.launcher) continue;
        const std::string_view name = p.launcher_name.empty() ? p.name : p.launcher_name;
        const Known* k = find_known(name);
        const int s = strength(name);
        if (k && s > best_strength) {
            best = {k->kind, std::string(k->command), "launcher process " + std::string(name) + " was recorded"};
            best_strength = s;
        }
    }
    if (best_strength > 0) return best;
    // The launcher itself was not traced (`mpirun -np 4 stacksage run -- ./app`):
    // the variables it gave the ranks still tell.
    for (const ProcessView& p : view.processes) {
        if (p.launcher) continue;
        if (p.identity_value("OMPI_COMM_WORLD_RANK"))
            return {LauncherKind::OpenMPI, "mpirun", "OMPI_COMM_WORLD_RANK in the ranks' environment"};
        if (p.identity_value("SLURM_STEP_ID") && p.identity_value("SLURM_PROCID"))
            return {LauncherKind::Slurm, "srun", "SLURM_STEP_ID in the ranks' environment"};
        if (p.identity_value("PMI_RANK") && p.identity_value("MPI_LOCALRANKID"))
            return {LauncherKind::Mpich, "mpiexec", "PMI_RANK and MPI_LOCALRANKID in the ranks' environment"};
    }
    // The command in run.json.
    const std::string_view cmd = view.run_command;
    std::string_view first = cmd.substr(0, cmd.find(' '));
    if (const std::size_t slash = first.rfind('/'); slash != std::string_view::npos) first.remove_prefix(slash + 1);
    if (const Known* k = find_known(first))
        return {k->kind, std::string(k->command), "the command in run.json starts with " + std::string(first)};
    return best;
}

}  // namespace stacksage
