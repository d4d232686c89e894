#include "analysis/activity.hpp"

#include <map>

#include "analysis/flow_refs.hpp"

namespace stacksage {

void classify_activity(FlowView& flow, const ActivityOptions& options) {
    flow.service = false;
    flow.starved = false;
    flow.cpu_fraction = -1;
    const std::int64_t life = flow.lifetime_ns();
    if (flow.cpu_time_us < 0 || life <= 0) return;
    flow.cpu_fraction = static_cast<double>(flow.cpu_time_us) * 1000.0 / static_cast<double>(life);
    if (life < options.min_lifetime_ns || flow.cpu_fraction >= options.service_fraction) return;
    if (flow.run_delay_ns >= 0) {
        // Ran or waited to run, as a fraction of its lifetime: what it asked for.
        const double waited = static_cast<double>(flow.run_delay_ns) / static_cast<double>(life);
        flow.starved = flow.cpu_fraction + waited >= options.service_fraction;
    } else {
        const double preemptions_per_s = static_cast<double>(flow.involuntary_switches) * 1e9 / static_cast<double>(life);
        flow.starved = flow.voluntary_switches >= 0 && flow.involuntary_switches > flow.voluntary_switches &&
                       (flow.voluntary_switches == 0 || preemptions_per_s >= options.starved_preemptions_per_s);
    }
    flow.service = !flow.starved;
}

std::string_view activity_state(const FlowView& flow) {
    return flow.service ? "service" : flow.starved ? "starved" : "active";
}

std::vector<Finding> check_service_flows(const RunView& view) {
    std::vector<Finding> out;
    for (const NodeView& node : view.nodes) {
        std::vector<std::uint32_t> service;
        std::map<std::string, std::size_t> by_runtime;
        Cpuset cpus;
        double highest = 0;
        for (std::uint32_t p : node.processes)
            for (std::uint32_t f : view.processes[p].flows) {
                const FlowView& flow = view.flows[f];
                if (!flow.service) continue;
                service.push_back(f);
                ++by_runtime[view.runtime_of(flow).name];
                cpus |= flow.placement;
                if (flow.cpu_fraction > highest) highest = flow.cpu_fraction;
            }
        if (service.empty()) continue;
        Finding finding;
        finding.code = "service-flows";
        finding.severity = Severity::Info;
        finding.check = "activity";
        finding.node = std::string(node.host);
        finding.resources = cpus;
        std::string list;
        for (const auto& [runtime, n] : by_runtime)
            list += (list.empty() ? "" : ", ") + std::to_string(n) + " from " + runtime;
        finding.message = std::to_string(service.size()) + " service flow(s) (" + list +
                          ") were alive but nearly idle (CPU time at most " +
                          std::to_string(static_cast<int>(highest * 100 + 0.5)) +
                          " % of their lifetime): they are listed, not counted as load";
        finding.figures = {{"service_flows", static_cast<std::int64_t>(service.size())}};
        attach_flows(finding, view, service);
        out.push_back(std::move(finding));
    }
    return out;
}

}  // namespace stacksage
