// Which launcher started the run, so that advice names the options of the
// launcher the user actually used.
//
// Evidence, strongest first: launcher processes the recorder saw (mpirun,
// prted, hydra_pmi_proxy, srun, ...), the variables launchers put in each
// rank's environment (OMPI_COMM_WORLD_RANK, PMI_RANK with MPI_LOCALRANKID,
// SLURM_STEP_ID), and the command in run.json.
#pragma once

#include <string>

#include "analysis/run_view.hpp"

namespace stacksage {

enum class LauncherKind : std::uint8_t { None, OpenMPI, Mpich, Slurm, Other };

struct LauncherInfo {
    LauncherKind kind = LauncherKind::None;
    std::string command;   // what the user typed: "mpirun", "mpiexec", "srun"; "" for None
    std::string evidence;  // how it was recognised, for the report
};

LauncherInfo detect_launcher(const RunView& view);

std::string_view to_string(LauncherKind kind);

}  // namespace stacksage
