// PuUsage: per CPU of a node, how many flows may run there and how much CPU
// time was spent there; the figures the HTML page colours its PUs by.
//
// "Allowed" counts a flow on every CPU of its placement, active and service
// flows apart. CPU time is measured where the cpu-clock samples say where
// flows ran (RanOn DataPaths with a CPU time, per PU component); without
// samples it is estimated: each flow's CPU time spread evenly over its
// placement.
#pragma once

#include <cstdint>
#include <map>

#include "analysis/run_view.hpp"

namespace stacksage {

struct CpuUsage {
    std::uint32_t active_flows = 0;   // active flows whose placement holds the CPU
    std::uint32_t service_flows = 0;  // service flows whose placement holds it
    double estimated_ms = 0;          // flows' CPU time spread over their placements
};

struct PuUsage {
    std::map<unsigned, CpuUsage> by_cpu;             // by CPU (PU os index); CPUs no flow may use are absent
    std::map<std::uint32_t, double> measured_ms;     // by PU component (index_of): sampled CPU time; empty without samples
};

// The usage of node `node` (an index into view.nodes), from the flows of its
// application processes. view.model must be set (the measured time is read
// from its DataPaths).
PuUsage compute_pu_usage(const RunView& view, std::uint32_t node);

}  // namespace stacksage
