// Check 7, suggestions: for each warning, the concrete change that would fix
// it, computed from the numbers of the node it concerns (processes, threads
// per process, available cores, whether OpenMP created the threads, what
// OMP_NUM_THREADS was) and written with the options of the launcher the run
// actually used (launcher.hpp): OMP_NUM_THREADS, OMP_PROC_BIND/OMP_PLACES,
// mpirun --map-by/--bind-to, mpiexec -ppn/-bind-to, srun
// --ntasks-per-node/--cpus-per-task/--cpu-bind.
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
