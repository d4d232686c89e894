// NodeLoad: how loaded each CPU of a node may get, at the worst moment.
//
// The runtime-stacking paper's checks are static: a flow "may use" the CPUs
// of its mask for the whole run. Flows have lifetimes, though: a program that
// starts a thousand short threads one after the other never has more than one
// running. So the counts here are taken over time: a sweep over the starts and
// ends of the node's active flows (service flows excluded, activity.hpp)
// keeps, for every CPU, the expected demand on it, and remembers where it
// ever went too high:
//  - thread granularity: a flow allowed on k CPUs adds 1/k to each. Threads
//    of one process that share its cpuset are then flagged only when they
//    outnumber it (the paper's rule for combining the granularities), and a
//    CPU is over-demanded when the sum passes 1.
//  - process granularity: a CPU that flows of two processes may use at the
//    same moment is shared (the paper's spatially concurrent configuration).
// The same demand is also summed per core, which tells SMT sharing apart.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/run_view.hpp"

namespace stacksage {

struct NodeLoad {
    std::vector<std::uint32_t> active_flows;  // of application processes, with a placement
    std::size_t active_processes = 0;  // application processes with at least one active flow
    Cpuset reserved;         // union of the active flows' placements (only available CPUs)
    Cpuset shared;           // CPUs flows of two or more processes may use at one moment
    Cpuset over_demanded;    // CPUs whose demand passed 1 at some moment
    Cpuset core_over_demanded;  // CPUs of cores whose summed demand passed 1 (SMT sharing)
    std::size_t peak_flows = 0;      // most active flows alive at one moment
    std::size_t peak_processes = 0;  // most processes with active flows alive at one moment
    double peak_demand = 0;          // highest demand any CPU reached
};

// The load of node `node` (an index into view.nodes).
NodeLoad compute_node_load(const RunView& view, std::uint32_t node);

// Cores of the node none of whose CPUs is in `reserved` (as their CPUs).
Cpuset idle_cores(const NodeView& node, const Cpuset& reserved);

}  // namespace stacksage
