// Check 2, resource-centric (the runtime-stacking paper's Algorithm 2), per
// node: every resource should be usable by exactly one flow.
//  - CPUs usable by flows of more than one process at one moment (process
//    granularity: a spatially concurrent configuration), or demanded by more
//    threads than they can run (thread granularity, where threads sharing
//    their process's cpuset count only when they outnumber it: node_load.hpp)
//    are overloaded ("overloaded-resources", warning);
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
