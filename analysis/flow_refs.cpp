#include "analysis/flow_refs.hpp"

namespace stacksage {

FlowRef flow_ref(const RunView& view, const FlowView& flow) {
    const ProcessView& p = view.processes[flow.process];
    FlowRef r;
    r.host = std::string(view.nodes[p.node].host);
    r.rank = p.rank;
    r.pid = p.pid;
    r.tid = flow.tid;
    r.runtime = view.runtime_of(flow).name;
    return r;
}

void attach_flows(Finding& finding, const RunView& view, const std::vector<std::uint32_t>& flows) {
    finding.flow_count = flows.size();
    finding.flows.clear();
    for (std::size_t i = 0; i < flows.size() && i < kMaxFlowRefs; ++i)
        finding.flows.push_back(flow_ref(view, view.flows[flows[i]]));
}

}  // namespace stacksage
