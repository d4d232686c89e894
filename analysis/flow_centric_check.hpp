// Check 1, flow-centric (the runtime-stacking paper's Algorithm 1), per node,
// at process granularity, taken over time: flows count only where they
// overlap in time (node_load.hpp's sweep), each with the mask it held then.
//  - at some moments more flows busy than hardware threads in the union of
//    the masks they held then, for the threshold in all: the reservation is
//    overloaded ("overloaded-reservation", warning), with the most flows
//    busy at such moments and the processes they came from. A launch
//    agent's shell and its `hostname`, alive for milliseconds before the
//    ranks start, compete with nothing and count for nothing;
//  - fewer threads computing at once than cores in the union of the masks
//    held while busy: cores are reserved for nothing
//    ("underloaded-reservation", warning).
// Between the two (more threads than cores, not more than hardware threads)
// is SMT's business (smt_check.hpp).
// Under a cgroup CPU quota below the CPUs in the union (NodeView::cpu_quota),
// the quota is the size: more threads than the quota's CPUs overload the
// reservation, and only the cores the quota can keep busy (0.5 CPU: one)
// can be left underloaded.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

// loads[i] is compute_node_load(view, i).
std::vector<Finding> check_flow_centric(const RunView& view, const std::vector<NodeLoad>& loads);
std::vector<Finding> check_flow_centric(const RunView& view);

}  // namespace stacksage
