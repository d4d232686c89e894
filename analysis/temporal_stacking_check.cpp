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

// Whether every flow of a runtime is a nearly idle service flow.
bool all_service(const RunView& view, const std::vector<std::uint32_t>& flows) {
    return std::all_of(flows.begin(), flows.end(), [&](std::uint32_t f) { return view.flows[f].service; });
}

// How two runtimes' flows met on a node: at the same time (temporal), on
// shared CPUs (spatial), and busy together on over-subscribed CPUs
// (contention). common: the CPUs both runtimes' flows may use.
PairVerdict judge_pair(const RunView& view, const std::vector<std::uint32_t>& a_flows,
                       const std::vector<std::uint32_t>& b_flows, const Cpuset& common, const Cpuset& oversubscribed) {
    PairVerdict v;
    v.common = common;
    v.spatial = !v.common.empty();
    for (std::uint32_t fa : a_flows) {
        const FlowView& x = view.flows[fa];
        for (std::uint32_t fb : b_flows) {
            const FlowView& y = view.flows[fb];
            if (!overlap(x, y)) continue;
            v.temporal = true;
            if (x.service || y.service || !x.placement.intersects(y.placement) || !busy_together(x, y)) continue;
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
        // The configuration is known once both concurrencies are seen,
        // unless contention is still to be found.
        if (v.temporal && !v.spatial) break;
    }
    return v;
}

// The configuration of a pair that met without contention, in the paper's words.
std::string calm_configuration(const PairVerdict& v, bool a_service, bool b_service, const std::string& ra,
                               const std::string& rb) {
    if (v.temporal && v.spatial && (a_service || b_service))
        return "temporally and spatially concurrent configuration, without contention: the " + (a_service ? ra : rb) +
               " flows are nearly idle service flows";
    if (v.temporal && v.spatial)
        return "temporally and spatially concurrent configuration, within capacity: they may use the same CPUs "
               "without over-subscribing them";
    if (v.temporal) return "temporally concurrent, spatially independent configuration: at the same time on separate CPUs";
    if (v.spatial)
        return "spatially concurrent, temporally independent configuration: the same CPUs one after the other";
    return "temporally and spatially independent configuration: at different times on separate CPUs";
}

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
                if (view.flows[f].kind != FlowKind::Main && !(view.flows[f].placement & node.available).empty())
                    by_runtime[view.flows[f].runtime].push_back(f);
        if (by_runtime.size() < 2) continue;
        std::map<std::uint32_t, Cpuset> cpus_of;
        // Pairs without contention, by configuration (in the order first
        // met): one finding per node lists them all.
        std::vector<std::pair<std::string, std::vector<std::string>>> calm;
        Cpuset calm_cpus;
        std::set<std::uint32_t> calm_runtimes;
        std::size_t calm_flows = 0, calm_pairs = 0;
        auto add_calm = [&](const std::string& configuration, const std::string& pair) {
            for (auto& [c, pairs] : calm)
                if (c == configuration) {
                    pairs.push_back(pair);
                    return;
                }
            calm.push_back({configuration, {pair}});
        };
        for (const auto& [r, flows] : by_runtime)
            for (std::uint32_t f : flows) cpus_of[r] |= view.flows[f].placement & node.available;

        for (auto a = by_runtime.begin(); a != by_runtime.end(); ++a)
            for (auto b = std::next(a); b != by_runtime.end(); ++b) {
                const bool a_service = all_service(view, a->second), b_service = all_service(view, b->second);
                const PairVerdict v = judge_pair(view, a->second, b->second, cpus_of[a->first] & cpus_of[b->first],
                                                 oversubscribed);
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
                    // Information: gathered into the node's one line below.
                    add_calm(calm_configuration(v, a_service, b_service, ra, rb), pair);
                    calm_cpus |= v.common;
                    ++calm_pairs;
                    for (auto r : {a->first, b->first})
                        if (calm_runtimes.insert(r).second) calm_flows += by_runtime[r].size();
                    continue;
                }
                out.push_back(std::move(f));
            }
        if (calm.empty()) continue;
        Finding f;
        f.check = "temporal-stacking";
        f.node = std::string(node.host);
        f.code = FindingCode::RuntimeStacking;
        f.severity = Severity::Info;
        f.resources = calm_cpus;
        f.flow_count = calm_flows;
        f.figures = {{"runtime_pairs", static_cast<std::int64_t>(calm_pairs)}};
        f.message =
            calm_pairs == 1 ? "Runtimes stacked without contention: " : "Runtime pairs stacked without contention: ";
        for (std::size_t i = 0; i < calm.size(); ++i) {
            std::string pairs;
            for (const std::string& p : calm[i].second) pairs += (pairs.empty() ? "" : ", ") + p;
            f.message += (i ? "; " : "") + pairs + " (" + calm[i].first + ")";
        }
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace stacksage
