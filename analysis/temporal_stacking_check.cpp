#include "analysis/temporal_stacking_check.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/flow_refs.hpp"
#include "core/run_model_schema.hpp"

namespace stacksage {

std::vector<Finding> check_temporal_stacking(const RunView& view) {
    std::vector<NodeLoad> loads;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) loads.push_back(compute_node_load(view, n));
    return check_temporal_stacking(view, loads);
}

namespace {

// Closed lifetimes: two flows alive at one moment.
bool overlap(const FlowView& a, const FlowView& b) {
    return a.start_ns <= std::max(b.end_ns, b.start_ns) && b.start_ns <= std::max(a.end_ns, a.start_ns);
}

// Both asked for a CPU at one moment (busy intervals, activity.hpp, overlap
// for a positive time).
bool busy_together(const FlowView& a, const FlowView& b) {
    auto i = a.busy.begin();
    auto j = b.busy.begin();
    while (i != a.busy.end() && j != b.busy.end()) {
        if (std::max(i->start_ns, j->start_ns) < std::min(i->end_ns, j->end_ns)) return true;
        (i->end_ns < j->end_ns ? i : j)++;
    }
    return false;
}

struct PairVerdict {
    bool temporal = false, spatial = false, contention = false;
    bool within_process = false, across_processes = false;  // where contention was seen
    Cpuset common;        // CPUs both may use
    Cpuset contended;     // over-subscribed CPUs both used at one moment
    std::set<std::uint32_t> flows;  // flows that took part in contention
};

}  // namespace

std::vector<Finding> check_temporal_stacking(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        const Cpuset oversubscribed = loads[n].over_demanded;
        // Flows of the node's application processes, by runtime. Main
        // threads are left out: every runtime of a process runs on its main
        // thread (the OpenMP master, the thread that calls MPI), so it
        // stacks nothing by itself.
        std::map<std::uint32_t, std::vector<std::uint32_t>> by_runtime;
        for (std::uint32_t p : node.processes)
            for (std::uint32_t f : view.processes[p].flows)
                if (view.flows[f].kind != to_string(FlowKind::Main) && !(view.flows[f].placement & node.available).empty())
                    by_runtime[view.flows[f].runtime].push_back(f);
        if (by_runtime.size() < 2) continue;
        std::map<std::uint32_t, Cpuset> cpus_of;
        for (const auto& [r, flows] : by_runtime)
            for (std::uint32_t f : flows) cpus_of[r] |= view.flows[f].placement & node.available;

        for (auto a = by_runtime.begin(); a != by_runtime.end(); ++a)
            for (auto b = std::next(a); b != by_runtime.end(); ++b) {
                PairVerdict v;
                const auto all_service = [&](const std::vector<std::uint32_t>& flows) {
                    return std::all_of(flows.begin(), flows.end(), [&](std::uint32_t f) { return view.flows[f].service; });
                };
                const bool a_service = all_service(a->second), b_service = all_service(b->second);
                v.common = cpus_of[a->first] & cpus_of[b->first];
                v.spatial = !v.common.empty();
                for (std::uint32_t fa : a->second) {
                    const FlowView& x = view.flows[fa];
                    for (std::uint32_t fb : b->second) {
                        const FlowView& y = view.flows[fb];
                        if (!overlap(x, y)) continue;
                        v.temporal = true;
                        if (x.service || y.service || !x.placement.intersects(y.placement) || !busy_together(x, y))
                            continue;
                        const Cpuset both = x.placement & y.placement & oversubscribed;
                        if (both.empty()) continue;
                        v.contention = true;
                        v.contended |= both;
                        (x.process == y.process ? v.within_process : v.across_processes) = true;
                        if (v.flows.size() < 4 * kMaxFlowRefs) {
                            v.flows.insert(fa);
                            v.flows.insert(fb);
                        }
                    }
                    // The configuration is known once both concurrencies are
                    // seen, unless contention is still to be found.
                    if (v.temporal && !v.spatial) break;
                }
                const std::string& ra = view.runtimes[a->first].name;
                const std::string& rb = view.runtimes[b->first].name;
                Finding f;
                f.check = "temporal-stacking";
                f.node = std::string(node.host);
                f.figures = {{"flows_" + ra, static_cast<std::int64_t>(a->second.size())},
                             {"flows_" + rb, static_cast<std::int64_t>(b->second.size())}};
                const std::string pair = ra + " and " + rb;
                if (v.contention) {
                    f.code = FindingCode::RuntimeContention;
                    f.severity = Severity::Warning;
                    f.resources = v.contended;
                    const std::string where = v.within_process && v.across_processes
                                                  ? "within and across processes"
                                                  : v.within_process ? "within processes" : "across processes";
                    f.message = pair + " run at the same time on the same over-subscribed " +
                                describe_cpus(node, v.contended) +
                                " (temporally and spatially concurrent configuration: contention " + where + ")";
                    attach_flows(f, view, std::vector<std::uint32_t>(v.flows.begin(), v.flows.end()));
                } else {
                    f.code = FindingCode::RuntimeStacking;
                    f.severity = Severity::Info;
                    f.resources = v.common;
                    if (v.temporal && v.spatial && (a_service || b_service))
                        f.message = pair + " run at the same time and may use the same " + describe_cpus(node, v.common) +
                                    ", but the " + (a_service ? ra : rb) +
                                    " flows are nearly idle service flows: they do not compete (temporally and "
                                    "spatially concurrent configuration, without contention)";
                    else if (v.temporal && v.spatial)
                        f.message = pair + " run at the same time and may use the same " + describe_cpus(node, v.common) +
                                    " without over-subscribing them (temporally and spatially concurrent "
                                    "configuration, within capacity)";
                    else if (v.temporal)
                        f.message = pair + " run at the same time on separate CPUs (temporally concurrent, "
                                           "spatially independent configuration)";
                    else if (v.spatial)
                        f.message = pair + " use the same " + describe_cpus(node, v.common) +
                                    " one after the other (spatially concurrent, temporally independent "
                                    "configuration)";
                    else
                        f.message = pair + " run at different times on separate CPUs (temporally and spatially "
                                           "independent configuration)";
                    f.flow_count = a->second.size() + b->second.size();
                }
                out.push_back(std::move(f));
            }
    }
    return out;
}

}  // namespace stacksage
