// Check 7, suggestions: for each warning, the change that fixes it when
// followed. First its cause (who bound the processes: binding_origin.hpp),
// then one fitting configuration computed from the node's numbers (cores,
// processes, the most threads of one process computing at once, OpenMP or
// not, OMP_NUM_THREADS as it was), written with the options of the launcher
// the run actually used (launcher.hpp): OMP_NUM_THREADS,
// OMP_PROC_BIND/OMP_PLACES, mpirun --map-by/--bind-to/-x, mpiexec
// -ppn/-bind-to/-genv, srun --ntasks-per-node/--cpus-per-task/--cpu-bind;
// and the same as data (Finding::remedy, remedy.hpp), which the live tests
// apply to show the re-run is clean.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/launcher.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

// Fills finding.suggestion for every warning or error whose code it knows
// (overloaded-resources, overloaded-reservation, idle-resources,
// underloaded-reservation, runtime-contention); leaves others alone.
void add_suggestions(const RunView& view, const std::vector<NodeLoad>& loads, const LauncherInfo& launcher,
                     std::vector<Finding>& findings);

}  // namespace stacksage
