#include "analysis/activity.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

#include "analysis/flow_refs.hpp"
#include "core/saturating.hpp"

namespace stacksage {

namespace {

// Whether a flow's recorded wait for a CPU was a compute thread's queueing
// (it waited at turns it used for much of a time slice, or it waited for a
// large part of its awake time), not a helper's queueing at each short
// wake-up. `waited` is the wait as a fraction of the awake time.
bool waited_as_compute_thread(const FlowView& flow, double waited, const ActivityOptions& options) {
    // Without the turns' count the wait is taken as it is.
    const std::int64_t turns = flow.run_slices > 0 ? flow.run_slices
                               : flow.voluntary_switches >= 0 && flow.involuntary_switches >= 0
                                   ? flow.voluntary_switches + flow.involuntary_switches + 1
                                   : -1;
    if (turns <= 0) return true;
    const double cpu_per_turn = static_cast<double>(flow.cpu_time_us) * 1000.0 / static_cast<double>(turns);
    return cpu_per_turn >= static_cast<double>(options.starved_min_cpu_per_slice_ns) ||
           waited >= options.starved_wait_fraction;
}

// What a flow asked for over its awake time decides its state, as
// classify_activity says; sets service and starved.
//
// \return whether its wait for a CPU is known and counts in its stretches:
// a starved flow's, and an active one's that waited as a compute thread
// does. On a crowded node a thread that got just over service_fraction of
// its life may get under it in a long stretch: that stretch is a wait for a
// CPU, not idleness.
bool classify_whole_life(FlowView& flow, const ActivityOptions& options) {
    const std::int64_t awake = flow.awake_ns();
    if (flow.cpu_time_us < 0 || awake <= 0) return false;
    flow.cpu_fraction = static_cast<double>(flow.cpu_time_us) * 1000.0 / static_cast<double>(awake);
    // Ran or waited to run, as a fraction of its awake time: what it asked for.
    const double waited =
        flow.run_delay_ns > 0 ? static_cast<double>(flow.run_delay_ns) / static_cast<double>(awake) : 0.0;
    if (flow.lifetime_ns() < options.min_lifetime_ns || flow.cpu_fraction >= options.service_fraction)
        return flow.run_delay_ns > 0 && waited_as_compute_thread(flow, waited, options);
    if (flow.run_delay_ns >= 0) {
        // A helper woken often for microseconds queues at every wake-up on a
        // crowded node: its turns are short.
        flow.starved = flow.cpu_fraction + waited >= options.service_fraction &&
                       waited_as_compute_thread(flow, waited, options);
    } else {
        const double preemptions_per_s = static_cast<double>(flow.involuntary_switches) * 1e9 / static_cast<double>(awake);
        flow.starved = flow.voluntary_switches >= 0 && flow.involuntary_switches > flow.voluntary_switches &&
                       (flow.voluntary_switches == 0 || preemptions_per_s >= options.starved_preemptions_per_s);
    }
    flow.service = !flow.starved;
    return flow.starved && flow.run_delay_ns > 0;
}

// A stretch of a flow's awake time, with the CPU readings at its bounds.
struct Stretch {
    CpuReading from, to;
    bool after_create = false;  // begins at one of the flow's pthread_create calls
    bool before_wait = false;   // ends where a recorded wait (pthread_join) begins
    bool known() const { return from.cpu_ns >= 0 && to.cpu_ns >= from.cpu_ns; }
    std::int64_t length() const { return subtract_saturating(to.t, from.t); }
    std::int64_t cpu() const { return known() ? subtract_saturating(to.cpu_ns, from.cpu_ns) : -1; }
    // The most it can have waited for a CPU: the time it did not run.
    std::int64_t room() const { return known() ? std::max<std::int64_t>(0, length() - cpu()) : length(); }
};

// The awake stretches between waits, each with the CPU readings at its
// bounds: a thread starts at 0, a wait records the CPU time at its start
// (and uses none while blocked), so does each pthread_create it made (at
// most one reading per ms), the end gives the total (total_ns, -1 unknown).
// (An untraced thread's start is the kernel's: it too starts at 0.)
std::vector<Stretch> awake_stretches(const FlowView& flow, std::int64_t total_ns) {
    const bool starts_at_zero = flow.kind != FlowKind::Discovered || flow.untraced;
    std::vector<Stretch> stretches;
    CpuReading from{flow.start_ns, starts_at_zero ? 0 : -1};
    bool from_create = false;
    auto add_stretch = [&](CpuReading to, bool before_wait) {
        if (to.t > from.t) stretches.push_back({from, to, from_create, before_wait});
        from_create = false;
    };
    // Readings taken as it created threads split the awake stretches further.
    auto reading = flow.cpu_readings.begin();
    auto read_until = [&](std::int64_t t) {
        for (; reading != flow.cpu_readings.end() && reading->t < t; ++reading) {
            if (reading->t <= from.t) continue;  // inside a wait, or out of order
            add_stretch(*reading, false);
            from = *reading;
            from_create = true;
        }
    };
    for (const TimeSpan& w : flow.waits) {
        read_until(w.start_ns);
        add_stretch({w.start_ns, w.cpu_ns}, true);
        from = {w.end_ns, w.cpu_ns};
    }
    read_until(flow.end_ns);
    add_stretch({flow.end_ns, total_ns}, false);
    return stretches;
}

}  // namespace

void classify_activity(FlowView& flow, const ActivityOptions& options) {
    flow.service = false;
    flow.starved = false;
    flow.cpu_fraction = -1;
    flow.busy.clear();
    const bool wait_counts = classify_whole_life(flow, options);
    const bool active = !flow.service;

    // A log may hold any figure: held at INT64_MAX rather than overflowing.
    const std::int64_t total_ns = flow.cpu_time_us < 0                          ? -1
                                  : flow.cpu_time_us > INT64_MAX / 1000 ? INT64_MAX
                                                                        : flow.cpu_time_us * 1000;
    // The stretches first, judged once all are known (a starved flow's wait
    // is shared out among them).
    const std::vector<Stretch> stretches = awake_stretches(flow, total_ns);

    // What a flow whose wait counts asked for in a stretch: the CPU it got
    // there plus its part of the wait for a CPU, which is known for its
    // whole life only. A thread waits for a CPU at each turn it gets, so the wait is
    // shared out in proportion to the CPU time, but a stretch holds at
    // least what the others have no room for (their length less their CPU
    // time) and at most its own room. A pool's parent that was starved while
    // it started on a crowded node, then blocked while its workers computed,
    // used almost no CPU in that stretch and asked for little there.
    std::int64_t all_room = 0;
    for (const Stretch& st : stretches) all_room = add_saturating(all_room, st.room());
    const std::int64_t delay = wait_counts ? flow.run_delay_ns : -1;
    auto asked = [&](const Stretch& st) {
        const double length = static_cast<double>(st.length());
        const double cpu = static_cast<double>(st.cpu());
        if (delay < 0 || total_ns <= 0) return 1.0;  // starved, wait unknown: busy throughout
        const double forced = std::max(0.0, static_cast<double>(delay) - static_cast<double>(all_room - st.room()));
        const double share = cpu * static_cast<double>(delay) / static_cast<double>(total_ns);
        const double waited = std::min(static_cast<double>(st.room()), std::max(forced, share));
        return (cpu + waited) / length;
    };
    for (const Stretch& st : stretches) {
        bool busy = active;
        const std::int64_t length = st.length();
        // A long enough stretch with both readings known is judged on its
        // own: a main thread that computed alone before it waited is load
        // then, even if its whole life is mostly waiting. A stretch under
        // the threshold is idle only if the flow did not wait for a CPU
        // there (a starved flow's low share is a wait for a CPU, not
        // idleness, and so is a crowded active flow's).
        // A creator between its last pthread_create and its join: below.
        const bool creator_until_join = st.after_create && st.before_wait;
        if (st.known() && length >= options.min_lifetime_ns && !creator_until_join) {
            const double fraction = static_cast<double>(st.cpu()) / static_cast<double>(length);
            busy = fraction >= options.service_fraction ||
                   ((flow.starved || wait_counts) && asked(st) >= options.service_fraction);
        } else if (st.known() && st.after_create && length > 0) {
            // A creator between two pthread_create calls, or between its
            // last one and its join: on a crowded CPU it waits there for
            // the threads it has just started, and that wait is theirs.
            // It computed beside them only if it used the CPU itself. Up to
            // its join this holds however long the wait: on a CPU shared by
            // its two new threads and other busy processes a creator waited
            // 26 ms to reach pthread_join, and was counted a third worker.
            busy = static_cast<double>(st.cpu()) / static_cast<double>(length) >= options.service_fraction;
        }
        if (!busy) continue;
        if (!flow.busy.empty() && flow.busy.back().end_ns == st.from.t) flow.busy.back().end_ns = st.to.t;
        else flow.busy.push_back({st.from.t, st.to.t, -1});
    }
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
