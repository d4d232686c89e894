// Check 3, SMT: on nodes whose cores have several hardware threads, the load
// is read at both levels.
//  - Busy cores of which only one hardware thread is used: information
//    ("smt-unused-hardware-threads"): often what HPC codes want, worth knowing.
//  - Threads that share a core through its hardware threads while no hardware
//    thread is over-subscribed: information ("smt-shared-cores").
// Idle cores are the resource-centric check's warning, not repeated here.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_smt(const RunView& view, const std::vector<NodeLoad>& loads);
std::vector<Finding> check_smt(const RunView& view);

}  // namespace stacksage
