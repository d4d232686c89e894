#include "analysis/resource_centric_check.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "analysis/affinity_cause.hpp"
#include "analysis/flow_refs.hpp"

namespace stacksage {

std::vector<Finding> check_resource_centric(const RunView& view) {
    std::vector<NodeLoad> loads;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) loads.push_back(compute_node_load(view, n));
    return check_resource_centric(view, loads);
}

namespace {

// A finding of this check about `resources` of one node.
Finding node_finding(FindingCode code, Severity severity, const NodeView& node, const Cpuset& resources) {
    Finding f;
    f.code = code;
    f.severity = severity;
    f.check = "resource-centric";
    f.node = std::string(node.host);
    f.resources = resources;
    return f;
}

Finding shared_within_capacity(const RunView& view, const NodeView& node, const NodeLoad& load) {
    Finding f = node_finding(FindingCode::SharedResources, Severity::Info, node, load.shared);
    std::vector<std::uint32_t> flows;
    std::set<std::uint32_t> processes;
    for (std::uint32_t i : load.active_flows)
        if (view.flows[i].placement.intersects(load.shared)) {
            flows.push_back(i);
            processes.insert(view.flows[i].process);
        }
    f.message = describe_cpus(node, load.shared) + " may be used by " + std::to_string(processes.size()) +
                " processes at once, but no CPU was asked for more than it could give (at most " +
                fmt::format("{:.1f}", load.peak_demand) +
                " thread per CPU): nothing waited for a CPU (spatially concurrent configuration, within capacity)";
    f.detail = "unbound processes may still migrate between these CPUs and lose their caches";
    f.figures = {{"processes", static_cast<std::int64_t>(processes.size())},
                 {"threads", static_cast<std::int64_t>(flows.size())},
                 {"shared_cpus", static_cast<std::int64_t>(load.shared.count())},
                 {"peak_threads_per_cpu_x10", static_cast<std::int64_t>(std::lround(load.peak_demand * 10))}};
    attach_flows(f, view, flows);
    return f;
}

// Over-demanded CPUs (with the CPUs processes shared at those times): who
// competed there, for how long, and what it cost them.
Finding overloaded_resources(const RunView& view, const NodeView& node, const NodeLoad& load, const Cpuset& overloaded) {
    Finding f = node_finding(FindingCode::OverloadedResources, Severity::Warning, node, overloaded);
    f.message = describe_cpus(node, overloaded) +
                " had more threads to run than they could run at once (overloaded resources) for " +
                describe_over_demand(load);
    if (!load.shared.empty()) f.message += " (spatially concurrent configuration)";
    // The masks affinity calls set, when they carried the over-demand.
    const AffinityCauses causes = affinity_causes(view, load);
    if (causes.caused_by_calls())
        f.message += ", after affinity calls: " + describe_affinity_calls(view, load, causes);
    // The flows busy there while the CPUs were over-demanded, under
    // the masks they held then; else (no episode long enough to say)
    // those whose placement holds them.
    std::vector<std::uint32_t> flows = load.over_demand_flows();
    if (flows.empty())
        for (std::uint32_t i : load.active_flows)
            if (view.flows[i].placement.intersects(overloaded)) flows.push_back(i);
    std::set<std::uint32_t> processes;
    for (std::uint32_t i : flows) processes.insert(view.flows[i].process);
    const std::size_t cores = node.cores_count(overloaded);
    const double peak = std::round(load.peak_demand * 10.0) / 10.0;
    f.detail = std::to_string(flows.size()) + (flows.size() == 1 ? " thread" : " threads") + " of " +
               std::to_string(processes.size()) + (processes.size() == 1 ? " process" : " processes") +
               " competed for these " + std::to_string(cores) + (cores == 1 ? " core" : " cores");
    if (load.peak_demand > 1.0 + 1e-9) {
        std::string p = std::to_string(peak);
        p.erase(p.find('.') + 2);
        f.detail += "; at the busiest (held for " + std::to_string(load.threshold_ns / 1'000'000) + " ms or more) " + p +
                    " threads competed for one CPU";
    }
    if (!load.shared.empty())
        f.detail += "; " + describe_cpus(node, load.shared) + " may be used by several processes at once";
    // The cost made visible: threads that got a sliver of a CPU (activity.hpp).
    const auto starved = static_cast<std::int64_t>(
        std::count_if(flows.begin(), flows.end(), [&](std::uint32_t i) { return view.flows[i].starved; }));
    if (starved > 0)
        f.detail += "; " + std::to_string(starved) +
                    " of these threads got under a tenth of a CPU but were not idle: they were ready to "
                    "run and waiting for one (starved)";
    f.figures = {{"threads", static_cast<std::int64_t>(flows.size())},
                 {"over_demanded_ms", load.over_demanded_ns / 1'000'000},
                 {"run_ms", load.run_ns() / 1'000'000},
                 {"over_demand_from_ms", subtract_saturating(load.first_over_demand_ns, load.run_start_ns) / 1'000'000},
                 {"over_demand_to_ms", subtract_saturating(load.last_over_demand_ns, load.run_start_ns) / 1'000'000},
                 {"starved_threads", starved},
                 {"affinity_calls", static_cast<std::int64_t>(causes.caused_by_calls() ? causes.calls.size() : 0)},
                 {"processes", static_cast<std::int64_t>(processes.size())},
                 {"cores", static_cast<std::int64_t>(cores)},
                 {"cpus", static_cast<std::int64_t>(overloaded.count())},
                 {"shared_cpus", static_cast<std::int64_t>(load.shared.count())},
                 {"over_demanded_cpus", static_cast<std::int64_t>(load.over_demanded.count())},
                 {"peak_threads_per_cpu_x10", static_cast<std::int64_t>(std::lround(load.peak_demand * 10))}};
    attach_flows(f, view, flows);
    return f;
}

// Cores no active thread of the node's processes may run on.
Finding idle_resources(const NodeView& node, const NodeLoad& load, const Cpuset& idle) {
    Finding f = node_finding(FindingCode::IdleResources, Severity::Warning, node, idle);
    f.message = describe_cpus(node, idle) + " may stay idle during execution (underloaded resources)";
    const std::size_t idle_cores_count = node.cores_count(idle);
    f.detail = "no active thread of the " + std::to_string(node.processes.size()) +
               (node.processes.size() == 1 ? " process" : " processes") + " on " + std::string(node.host) +
               " may run on " + (idle_cores_count == 1 ? "this core" : "these " + std::to_string(idle_cores_count) + " cores") +
               " (" + std::to_string(node.cores.size() - idle_cores_count) + " of " +
               std::to_string(node.cores.size()) + " available cores are used)";
    f.figures = {{"idle_cores", static_cast<std::int64_t>(idle_cores_count)},
                 {"cores_available", static_cast<std::int64_t>(node.cores.size())},
                 {"threads", static_cast<std::int64_t>(load.peak_flows)},
                 {"processes", static_cast<std::int64_t>(node.processes.size())}};
    f.flow_count = 0;
    return f;
}

}  // namespace

std::vector<Finding> check_resource_centric(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        const NodeLoad& load = loads[n];
        // Over-demanded CPUs, and the CPUs processes shared at those times:
        // sharing alone, with no CPU asked for more than it gives (two
        // unbound single-threaded ranks on two cores), is information.
        const Cpuset overloaded = load.over_demanded.empty() ? Cpuset{} : load.over_demanded | load.shared;
        if (overloaded.empty() && !load.shared.empty()) out.push_back(shared_within_capacity(view, node, load));
        if (!overloaded.empty()) out.push_back(overloaded_resources(view, node, load, overloaded));
        if (node.processes.empty()) continue;
        const Cpuset idle = idle_cores(node, load.reserved);
        // Under a cgroup quota that the cores in use already fill, the idle
        // cores could not run anything more: the quota is the limit.
        const std::size_t used_cores = node.cores.size() - node.cores_count(idle);
        const bool quota_filled = node.cpu_quota > 0 &&
                                  static_cast<double>(used_cores) >= std::ceil(node.cpu_quota - 1e-9);
        if (!idle.empty() && !quota_filled) out.push_back(idle_resources(node, load, idle));
    }
    return out;
}

}  // namespace stacksage
