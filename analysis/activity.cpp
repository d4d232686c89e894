#include "analysis/activity.hpp"

#include <cstdint>
#include <map>

#include "analysis/flow_refs.hpp"
#include "core/saturating.hpp"

namespace stacksage {

namespace {

// What a flow asked for over its awake time decides its state, as
// classify_activity says; sets service and starved.
void classify_whole_life(FlowView& flow, const ActivityOptions& options) {
    const std::int64_t awake = flow.awake_ns();
    if (flow.cpu_time_us < 0 || awake <= 0) return;
    flow.cpu_fraction = static_cast<double>(flow.cpu_time_us) * 1000.0 / static_cast<double>(awake);
    if (flow.lifetime_ns() < options.min_lifetime_ns || flow.cpu_fraction >= options.service_fraction) return;
    if (flow.run_delay_ns >= 0) {
        // Ran or waited to run, as a fraction of its awake time: what it asked for.
        const double waited = static_cast<double>(flow.run_delay_ns) / static_cast<double>(awake);
        flow.starved = flow.cpu_fraction + waited >= options.service_fraction;
        // A helper woken often for microseconds queues at every wake-up on a
        // crowded node: its turns are short. Without the turns' count it
        // keeps the verdict above.
        const std::int64_t turns = flow.run_slices > 0 ? flow.run_slices
                                   : flow.voluntary_switches >= 0 && flow.involuntary_switches >= 0
                                       ? flow.voluntary_switches + flow.involuntary_switches + 1
                                       : -1;
        if (flow.starved && turns > 0) {
            const double cpu_per_turn = static_cast<double>(flow.cpu_time_us) * 1000.0 / static_cast<double>(turns);
            flow.starved = cpu_per_turn >= static_cast<double>(options.starved_min_cpu_per_slice_ns) ||
                           waited >= options.starved_wait_fraction;
        }
    } else {
        const double preemptions_per_s = static_cast<double>(flow.involuntary_switches) * 1e9 / static_cast<double>(awake);
        flow.starved = flow.voluntary_switches >= 0 && flow.involuntary_switches > flow.voluntary_switches &&
                       (flow.voluntary_switches == 0 || preemptions_per_s >= options.starved_preemptions_per_s);
    }
    flow.service = !flow.starved;
}

}  // namespace

void classify_activity(FlowView& flow, const ActivityOptions& options) {
    flow.service = false;
    flow.starved = false;
    flow.cpu_fraction = -1;
    flow.busy.clear();
    classify_whole_life(flow, options);
    const bool active = !flow.service;

    // The awake stretches between waits, each with the CPU readings at its
    // bounds: a thread starts at 0, a wait records the CPU time at its
    // start (and uses none while blocked), so does each pthread_create it
    // made (at most one reading per ms), the end gives the total.
    const bool starts_at_zero = flow.kind != "discovered";
    // A log may hold any figure: held at INT64_MAX rather than overflowing.
    const std::int64_t total_ns = flow.cpu_time_us < 0                          ? -1
                                  : flow.cpu_time_us > INT64_MAX / 1000 ? INT64_MAX
                                                                        : flow.cpu_time_us * 1000;
    CpuReading from{flow.start_ns, starts_at_zero ? 0 : -1};
    auto add_stretch = [&](CpuReading to) {
        if (to.t <= from.t) return;
        bool busy = active;
        const std::int64_t length = subtract_saturating(to.t, from.t);
        // A long enough stretch with both readings known is judged on its
        // own: a main thread that computed alone before it waited is load
        // then, even if its whole life is mostly waiting. A stretch under
        // the threshold is idle only if the flow was not starved (a starved
        // flow's low share is a wait for a CPU, not idleness).
        if (from.cpu_ns >= 0 && to.cpu_ns >= from.cpu_ns && length >= options.min_lifetime_ns) {
            const double fraction = static_cast<double>(to.cpu_ns - from.cpu_ns) / static_cast<double>(length);
            busy = fraction >= options.service_fraction || flow.starved;
        }
        if (!busy) return;
        if (!flow.busy.empty() && flow.busy.back().end_ns == from.t)
            flow.busy.back().end_ns = to.t;
        else
            flow.busy.push_back({from.t, to.t, -1});
    };
    // Readings taken as it created threads split the awake stretches further.
    auto reading = flow.cpu_readings.begin();
    auto read_until = [&](std::int64_t t) {
        for (; reading != flow.cpu_readings.end() && reading->t < t; ++reading) {
            if (reading->t <= from.t) continue;  // inside a wait, or out of order
            add_stretch(*reading);
            from = *reading;
        }
    };
    for (const TimeSpan& w : flow.waits) {
        read_until(w.start_ns);
        add_stretch({w.start_ns, w.cpu_ns});
        from = {w.end_ns, w.cpu_ns};
    }
    read_until(flow.end_ns);
    add_stretch({flow.end_ns, total_ns});
    // A flow alive for an instant (start == end) that counts as load keeps
    // that instant: the checks still see it.
    if (flow.busy.empty() && active && flow.waits.empty()) flow.busy.push_back({flow.start_ns, flow.end_ns, -1});
    // Service means no demand at any time, whatever the whole-life figures said.
    flow.service = flow.busy.empty();
    if (flow.service) flow.starved = false;
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
        finding.code = FindingCode::ServiceFlows;
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
