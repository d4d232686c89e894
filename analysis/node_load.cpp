#include "analysis/node_load.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/saturating.hpp"

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

// In time order; at one moment starts before ends, so that no count goes
// below zero while a moment's events are applied (a flow busy for an
// instant starts and ends at the same time). Time is only counted between
// moments, so the order within one changes no duration.
void sort_events(std::vector<Event>& events) {
    std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        if (a.t != b.t) return a.t < b.t;
        return a.start > b.start;
    });
}

// Time spent at each count of something (busy flows, processes): the
// highest count held for at least `threshold` in all. Where no count above
// 0 was held that long (a run of instants, flows busy for moments), the
// highest count seen.
class LevelTimes {
public:
    void add(std::size_t level, std::int64_t dt) {
        if (level >= time_at_.size()) time_at_.resize(level + 1, 0);
        time_at_[level] = add_saturating(time_at_[level], dt);
    }
    void saw(std::size_t level) { highest_ = std::max(highest_, level); }
    std::size_t sustained_peak(std::int64_t threshold) const {
        std::int64_t at_least = 0;
        for (std::size_t level = time_at_.size(); level-- > 1;) {
            at_least = add_saturating(at_least, time_at_[level]);
            if (at_least >= threshold && at_least > 0) return level;
        }
        return highest_;
    }

private:
    std::vector<std::int64_t> time_at_;
    std::size_t highest_ = 0;
};

// One demand counter (a CPU or a core) over the sweep: how long it was over
// 1 in all, its over-1 episodes, and the time it spent at each level (in
// tenths of a thread) for the sustained peak.
struct DemandTrack {
    double demand = 0;
    std::int64_t since = 0;      // when `demand` took its current value
    std::int64_t over_ns = 0;
    std::vector<TimeSpan> episodes;
    LevelTimes tenths;

    static std::size_t level_of(double d) { return d <= 0 ? 0 : static_cast<std::size_t>(std::lround(d * 10)); }

    // Changes the demand by `delta` at time t.
    void change(std::int64_t t, double delta) {
        const bool was_over = demand > 1.0 + kEpsilon;
        tenths.add(level_of(demand), subtract_saturating(t, since));
        if (was_over) over_ns = add_saturating(over_ns, subtract_saturating(t, since));
        demand += delta;
        if (std::fabs(demand) < kEpsilon) demand = 0;
        tenths.saw(level_of(demand));
        const bool is_over = demand > 1.0 + kEpsilon;
        if (!was_over && is_over) episodes.push_back({t, t, -1});
        if (was_over && !is_over && !episodes.empty()) episodes.back().end_ns = t;
        since = t;
    }
};

// The union of the over-demand episodes of the CPUs reported: total time,
// first and last moment. Episodes under min_ns are left out of the window
// (the instant a creator and its new threads overlap) unless nothing else
// is left.
// Sorted, merged: the union of the spans.
std::vector<TimeSpan> merged(std::vector<TimeSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; });
    std::vector<TimeSpan> out;
    for (const TimeSpan& s : spans) {
        if (s.end_ns <= s.start_ns) continue;
        if (!out.empty() && s.start_ns <= out.back().end_ns) out.back().end_ns = std::max(out.back().end_ns, s.end_ns);
        else out.push_back(s);
    }
    return out;
}

// How long two unions of spans (merged()) overlap.
std::int64_t overlap_ns(const std::vector<TimeSpan>& a, const std::vector<TimeSpan>& b) {
    std::int64_t total = 0;
    auto i = a.begin();
    auto j = b.begin();
    while (i != a.end() && j != b.end()) {
        const std::int64_t from = std::max(i->start_ns, j->start_ns), to = std::min(i->end_ns, j->end_ns);
        if (to > from) total = add_saturating(total, subtract_saturating(to, from));
        (i->end_ns < j->end_ns ? i : j)++;
    }
    return total;
}

void measure_over_demand(NodeLoad& load, const std::vector<DemandTrack>& cpus, std::int64_t min_ns) {
    std::vector<TimeSpan> all;
    for (unsigned cpu : load.over_demanded)
        if (cpu < cpus.size()) all.insert(all.end(), cpus[cpu].episodes.begin(), cpus[cpu].episodes.end());
    std::vector<TimeSpan> long_enough;
    std::copy_if(all.begin(), all.end(), std::back_inserter(long_enough),
                 [&](const TimeSpan& e) { return e.length_ns() >= min_ns; });
    std::vector<TimeSpan>& kept = long_enough.empty() ? all : long_enough;
    std::sort(kept.begin(), kept.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; });
    std::int64_t covered_to = INT64_MIN;
    for (const TimeSpan& e : kept) {
        const std::int64_t from = std::max(e.start_ns, covered_to);
        if (e.end_ns > from) load.over_demanded_ns = add_saturating(load.over_demanded_ns, subtract_saturating(e.end_ns, from));
        covered_to = std::max(covered_to, e.end_ns);
        if (load.first_over_demand_ns < 0) load.first_over_demand_ns = e.start_ns;
        load.last_over_demand_ns = std::max(load.last_over_demand_ns, e.end_ns);
    }
}

std::string seconds(std::int64_t ns) {
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 0.0995) return fmt::format("{:.0f} ms", s * 1e3);
    return s < 9.995 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} s", s);
}

}  // namespace

Cpuset idle_cores(const NodeView& node, const Cpuset& reserved) {
    Cpuset idle;
    for (const Cpuset& core : node.cores)
        if (!core.intersects(reserved)) idle |= core;
    return idle;
}

std::string describe_over_demand(const NodeLoad& load) {
    if (load.over_demanded_ns <= 0) return {};
    const std::int64_t run = load.run_ns();
    const std::int64_t from = std::max<std::int64_t>(0, subtract_saturating(load.first_over_demand_ns, load.run_start_ns));
    const std::int64_t to = std::max<std::int64_t>(0, subtract_saturating(load.last_over_demand_ns, load.run_start_ns));
    const std::string window = "from " + seconds(from) + " to " + seconds(to);
    if (run <= 0) return seconds(load.over_demanded_ns) + " (" + window + ")";
    const double percent = 100.0 * static_cast<double>(load.over_demanded_ns) / static_cast<double>(run);
    if (percent >= 99.5) return "the whole run (" + seconds(run) + ")";
    return fmt::format("{:.0f} % of the run ({} of {}, {})", percent, seconds(load.over_demanded_ns), seconds(run),
                       window);
}

NodeLoad compute_node_load(const RunView& view, std::uint32_t node_index, const NodeLoadOptions& options) {
    const NodeView& node = view.nodes[node_index];
    NodeLoad load;
    const std::size_t cpus = node.available.end_index();

    bool any = false;
    for (const auto* list : {&node.processes, &node.launchers})
        for (std::uint32_t p : *list) {
            const ProcessView& process = view.processes[p];
            load.run_start_ns = any ? std::min(load.run_start_ns, process.start_ns) : process.start_ns;
            load.run_end_ns = any ? std::max(load.run_end_ns, process.end_ns) : process.end_ns;
            any = true;
        }
    const auto by_fraction = static_cast<std::int64_t>(options.min_overload_fraction * static_cast<double>(load.run_ns()));
    const std::int64_t threshold = std::max(options.min_overload_ns, by_fraction);
    load.threshold_ns = threshold;

    // Per process: the window its busy flows cover and the CPUs they may use.
    struct ProcessSpan {
        std::int64_t start = 0, end = 0;
        Cpuset cpus;
        bool any = false;
    };
    std::vector<ProcessSpan> spans;
    std::vector<Event> flow_events;
    // Each active flow's available CPUs and cores, computed once: the sweep
    // visits every busy interval twice.
    struct Placed {
        std::vector<unsigned> cpus;
        std::vector<std::uint32_t> cores;
        std::uint32_t span = 0;  // its process, an index into spans
    };
    std::vector<Placed> placed_of;
    for (std::uint32_t p : node.processes) {
        ProcessSpan span;
        for (std::uint32_t f : view.processes[p].flows) {
            const FlowView& flow = view.flows[f];
            if (flow.service || flow.busy.empty()) continue;
            const Cpuset placed = flow.placement & node.available;
            if (placed.empty()) continue;
            const auto slot = static_cast<std::uint32_t>(placed_of.size());
            placed_of.push_back({std::vector<unsigned>(placed.begin(), placed.end()), node.cores_touching(placed),
                                 static_cast<std::uint32_t>(spans.size())});
            load.active_flows.push_back(f);
            load.reserved |= placed;
            for (const TimeSpan& b : flow.busy) {
                flow_events.push_back({b.start_ns, true, slot});
                flow_events.push_back({std::max(b.end_ns, b.start_ns), false, slot});
            }
            const std::int64_t first = flow.busy.front().start_ns, last = flow.busy.back().end_ns;
            span.start = span.any ? std::min(span.start, first) : first;
            span.end = span.any ? std::max(span.end, last) : last;
            span.cpus |= placed;
            span.any = true;
        }
        if (span.any) {
            spans.push_back(std::move(span));
            load.process_peak_flows.emplace_back(p, 0);
        }
    }
    load.active_processes = spans.size();

    // Thread granularity: fractional demand per CPU and per core. Events of
    // one moment are applied together; time is counted between moments.
    std::vector<DemandTrack> cpu_track(cpus), core_track(node.cores.size());
    LevelTimes flows_at;
    std::vector<LevelTimes> process_flows_at(spans.size());
    std::vector<std::size_t> process_alive(spans.size(), 0);
    std::vector<std::int64_t> process_since(spans.size(), 0);  // when its count last changed
    sort_events(flow_events);
    std::size_t alive = 0;
    for (std::size_t i = 0; i < flow_events.size();) {
        const std::int64_t t = flow_events[i].t;
        if (i > 0) flows_at.add(alive, subtract_saturating(t, flow_events[i - 1].t));
        for (; i < flow_events.size() && flow_events[i].t == t; ++i) {
            const Event& e = flow_events[i];
            const Placed& placed = placed_of[e.who];
            const double sign = e.start ? 1.0 : -1.0;
            const double share = sign / static_cast<double>(placed.cpus.size());
            for (unsigned cpu : placed.cpus) cpu_track[cpu].change(t, share);
            const double core_share = sign / static_cast<double>(placed.cores.size());
            for (std::uint32_t c : placed.cores) core_track[c].change(t, core_share);
            alive = e.start ? alive + 1 : alive - 1;
            flows_at.saw(alive);
            std::size_t& mine = process_alive[placed.span];
            process_flows_at[placed.span].add(mine, subtract_saturating(t, process_since[placed.span]));
            process_since[placed.span] = t;
            mine = e.start ? mine + 1 : mine - 1;
            process_flows_at[placed.span].saw(mine);
        }
    }
    load.peak_flows = flows_at.sustained_peak(threshold);
    for (std::size_t s = 0; s < spans.size(); ++s)
        load.process_peak_flows[s].second = process_flows_at[s].sustained_peak(threshold);
    for (unsigned cpu = 0; cpu < cpus; ++cpu)
        if (cpu_track[cpu].over_ns >= threshold && cpu_track[cpu].over_ns > 0) load.over_demanded.set(cpu);
    for (std::uint32_t c = 0; c < node.cores.size(); ++c)
        if (core_track[c].over_ns >= threshold && core_track[c].over_ns > 0) load.core_over_demanded |= node.cores[c];
    for (const DemandTrack& d : cpu_track)
        load.peak_demand = std::max(load.peak_demand, static_cast<double>(d.tenths.sustained_peak(threshold)) / 10.0);
    measure_over_demand(load, cpu_track, options.min_window_episode_ns);
    if (!load.over_demanded.empty()) {
        std::vector<TimeSpan> over;
        for (unsigned cpu : load.over_demanded)
            if (cpu < cpu_track.size())
                over.insert(over.end(), cpu_track[cpu].episodes.begin(), cpu_track[cpu].episodes.end());
        over = merged(std::move(over));
        std::vector<std::vector<TimeSpan>> busy_of(spans.size());
        for (std::size_t slot = 0; slot < placed_of.size(); ++slot) {
            const FlowView& flow = view.flows[load.active_flows[slot]];
            busy_of[placed_of[slot].span].insert(busy_of[placed_of[slot].span].end(), flow.busy.begin(),
                                                 flow.busy.end());
        }
        for (std::size_t s = 0; s < spans.size(); ++s) {
            const std::int64_t during = overlap_ns(merged(std::move(busy_of[s])), over);
            if (during >= threshold && during > 0)
                load.over_demand_processes.push_back(load.process_peak_flows[s].first);
        }
    }

    // Process granularity: how many processes may use each CPU at one moment.
    std::vector<Event> process_events;
    for (std::uint32_t i = 0; i < spans.size(); ++i) {
        process_events.push_back({spans[i].start, true, i});
        process_events.push_back({std::max(spans[i].end, spans[i].start), false, i});
    }
    sort_events(process_events);
    std::vector<std::uint32_t> users(cpus, 0);
    std::vector<std::int64_t> shared_since(cpus, -1), shared_ns(cpus, 0);
    LevelTimes processes_at;
    alive = 0;
    for (std::size_t i = 0; i < process_events.size();) {
        const std::int64_t t = process_events[i].t;
        if (i > 0) processes_at.add(alive, subtract_saturating(t, process_events[i - 1].t));
        for (; i < process_events.size() && process_events[i].t == t; ++i) {
            const Event& e = process_events[i];
            for (unsigned cpu : spans[e.who].cpus) {
                const bool was_shared = users[cpu] >= 2;
                users[cpu] = e.start ? users[cpu] + 1 : users[cpu] - 1;
                const bool is_shared = users[cpu] >= 2;
                if (!was_shared && is_shared) shared_since[cpu] = t;
                if (was_shared && !is_shared) shared_ns[cpu] = add_saturating(shared_ns[cpu], subtract_saturating(t, shared_since[cpu]));
            }
            alive = e.start ? alive + 1 : alive - 1;
            processes_at.saw(alive);
        }
    }
    for (unsigned cpu = 0; cpu < cpus; ++cpu)
        if (shared_ns[cpu] >= threshold && shared_ns[cpu] > 0) load.shared.set(cpu);
    load.peak_processes = processes_at.sustained_peak(threshold);
    return load;
}

}  // namespace stacksage
