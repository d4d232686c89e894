// Check 2, resource-centric (the runtime-stacking paper's Algorithm 2), per
// node: every resource should be usable by exactly one flow.
//  - CPUs demanded by more busy threads than they can run, for long enough
//    (thread granularity, where threads sharing their process's cpuset count
//    only when they outnumber it: node_load.hpp), are overloaded
//    ("overloaded-resources", warning), with how long and when, and the CPUs
//    processes shared meanwhile (process granularity);
//  - CPUs usable by flows of several processes at one moment while no CPU
//    is over-demanded (a spatially concurrent configuration within
//    capacity) are information ("shared-resources"): nothing waits;
//  - cores no active flow may use stay idle ("idle-resources", warning).
// Nodes where no application process ran get no idle warning: nothing was
// placed there (a launcher's node).
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_resource_centric(const RunView& view, const std::vector<NodeLoad>& loads);
std::vector<Finding> check_resource_centric(const RunView& view);

}  // namespace stacksage
