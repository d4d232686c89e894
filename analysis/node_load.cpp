#include "analysis/node_load.hpp"

#include <algorithm>

namespace stacksage {

namespace {
// Demands are sums of fractions 1/k: a tolerance keeps "exactly full" from
// reading as over-full after rounding.
constexpr double kEpsilon = 1e-9;

struct Event {
    std::int64_t t;
    bool start;         // false: end
    std::uint32_t who;  // slot in placed_of, or in spans for the process sweep
};

// Lifetimes are closed intervals: a flow that ends at the moment another
// starts shares that moment with it (starts sort first at equal times). A
// killed process's flows all "end" at its last event: they were alive then.
void sort_events(std::vector<Event>& events) {
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        if (a.t != b.t) return a.t < b.t;
        return a.start > b.start;
    });
}
}  // namespace

Cpuset idle_cores(const NodeView& node, const Cpuset& reserved) {
    Cpuset idle;
    for (const Cpuset& core : node.cores)
        if (!core.intersects(reserved)) idle |= core;
    return idle;
}

NodeLoad compute_node_load(const RunView& view, std::uint32_t node_index) {
    const NodeView& node = view.nodes[node_index];
    NodeLoad load;
    const std::size_t cpus = node.available.end_index();

    // Per process: the window its active flows cover and the CPUs they may use.
    struct ProcessSpan {
        std::int64_t start = 0, end = 0;
        Cpuset cpus;
        bool any = false;
    };
    std::vector<ProcessSpan> spans;
    std::vector<Event> flow_events;
    // Each active flow's available CPUs and cores, computed once: the sweep
    // visits every flow twice.
    struct Placed {
        std::vector<unsigned> cpus;
        std::vector<std::uint32_t> cores;
    };
    std::vector<Placed> placed_of;
    for (std::uint32_t p : node.processes) {
        ProcessSpan span;
        for (std::uint32_t f : view.processes[p].flows) {
            const FlowView& flow = view.flows[f];
            if (flow.service) continue;
            const Cpuset placed = flow.placement & node.available;
            if (placed.empty()) continue;
            const auto slot = static_cast<std::uint32_t>(placed_of.size());
            placed_of.push_back({std::vector<unsigned>(placed.begin(), placed.end()), node.cores_touching(placed)});
            load.active_flows.push_back(f);
            load.reserved |= placed;
            flow_events.push_back({flow.start_ns, true, slot});
            flow_events.push_back({std::max(flow.end_ns, flow.start_ns), false, slot});
            span.start = span.any ? std::min(span.start, flow.start_ns) : flow.start_ns;
            span.end = span.any ? std::max(span.end, flow.end_ns) : flow.end_ns;
            span.cpus |= placed;
            span.any = true;
        }
        if (span.any) spans.push_back(std::move(span));
    }
    load.active_processes = spans.size();

    // Thread granularity: fractional demand per CPU and per core.
    std::vector<double> demand(cpus, 0.0);
    std::vector<double> core_demand(node.cores.size(), 0.0);
    std::vector<std::uint8_t> over(cpus, 0), core_over(node.cores.size(), 0);
    sort_events(flow_events);
    std::size_t alive = 0;
    for (const Event& e : flow_events) {
        const Placed& placed = placed_of[e.who];
        const double share = 1.0 / static_cast<double>(placed.cpus.size());
        const double sign = e.start ? 1.0 : -1.0;
        for (unsigned cpu : placed.cpus) {
            demand[cpu] += sign * share;
            if (e.start && demand[cpu] > 1.0 + kEpsilon) over[cpu] = 1;
            if (demand[cpu] > load.peak_demand) load.peak_demand = demand[cpu];
        }
        const double core_share = 1.0 / static_cast<double>(placed.cores.size());
        for (std::uint32_t c : placed.cores) {
            core_demand[c] += sign * core_share;
            if (e.start && core_demand[c] > 1.0 + kEpsilon) core_over[c] = 1;
        }
        alive = e.start ? alive + 1 : alive - 1;
        load.peak_flows = std::max(load.peak_flows, alive);
    }
    for (unsigned cpu = 0; cpu < cpus; ++cpu)
        if (over[cpu]) load.over_demanded.set(cpu);
    for (std::uint32_t c = 0; c < node.cores.size(); ++c)
        if (core_over[c]) load.core_over_demanded |= node.cores[c];

    // Process granularity: how many processes may use each CPU at one moment.
    std::vector<Event> process_events;
    for (std::uint32_t i = 0; i < spans.size(); ++i) {
        process_events.push_back({spans[i].start, true, i});
        process_events.push_back({std::max(spans[i].end, spans[i].start), false, i});
    }
    sort_events(process_events);
    std::vector<std::uint32_t> users(cpus, 0);
    alive = 0;
    for (const Event& e : process_events) {
        for (unsigned cpu : spans[e.who].cpus) {
            users[cpu] = e.start ? users[cpu] + 1 : users[cpu] - 1;
            if (e.start && users[cpu] >= 2) load.shared.set(cpu);
        }
        alive = e.start ? alive + 1 : alive - 1;
        load.peak_processes = std::max(load.peak_processes, alive);
    }
    return load;
}

}  // namespace stacksage
