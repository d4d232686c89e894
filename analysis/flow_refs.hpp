// Naming flows in findings: host, rank, pid, tid and runtime of each.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

FlowRef flow_ref(const RunView& view, const FlowView& flow);

// Sets finding.flows (the first kMaxFlowRefs, in the given order) and
// finding.flow_count (all of them).
void attach_flows(Finding& finding, const RunView& view, const std::vector<std::uint32_t>& flows);

}  // namespace stacksage
