// Check 4, temporal stacking (the runtime-stacking paper's future work): for
// every pair of runtimes on a node (flows grouped by the runtime that created
// them, application threads included), whether their flows were alive at the
// same moment (temporally concurrent) and may use the same CPUs (spatially
// concurrent).
//  - Both, on CPUs that were over-subscribed (node_load.hpp): contention,
//    "runtime-contention", a warning.
//  - Any other combination: "runtime-stacking", information naming the
//    configuration (temporally concurrent and spatially independent,
//    spatially concurrent and temporally independent, both independent, or
//    both concurrent within capacity: an OpenMP team's master thread and its
//    workers sharing the process's cores take turns without over-subscription).
// The pairs without contention of one node are one finding, grouped by
// configuration ("Runtime pairs stacked without contention: GNU OpenMP and
// Open MPI, application and PMIx (temporally and spatially concurrent
// configuration, within capacity: ...); ..."): one line per node, however
// many runtimes it holds. Each contention is a finding of its own.
// Service flows take part in the configurations but never make contention.
// Main threads take no part: every runtime of a process runs on its main
// thread, which stacks nothing by itself.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_temporal_stacking(const RunView& view, const std::vector<NodeLoad>& loads);
std::vector<Finding> check_temporal_stacking(const RunView& view);

}  // namespace stacksage
