// Is the recording complete? A job whose remote ranks ran without the
// recorder otherwise looks like a smaller, healthy job. From what the
// recorded processes say about the job (MPI_COMM_WORLD's size at MPI_Init,
// the launchers' size and rank variables, the launcher's command line: -np,
// --host, srun -n/-w; Slurm's node lists) the check knows how many ranks and
// which hosts the job had, and compares with the logs:
//
// - incomplete-recording (error): ranks, or hosts that had to run one (a
//   Slurm step's nodes, srun -w), left no log; with the likely cause and the
//   command that records them;
// - allocated-node-unused (warning): the recording is complete, yet a node of
//   the Slurm allocation ran no rank: a node paid for and left idle.
//
// Both are run-wide findings (node ""), naming the ranks and hosts in
// Finding::ranks and Finding::hosts.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/launcher.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_completeness(const RunView& view, const LauncherInfo& launcher);

// Host names as the recorder writes them (uname's nodename) and as Slurm or
// a host file names them: equal, or equal up to the first dot
// ("n01.cluster.local" is "n01").
bool same_host(std::string_view a, std::string_view b);

}  // namespace stacksage
