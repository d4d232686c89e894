#include "analysis/node_load.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <map>
#include <unordered_map>

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

// A quantity integrated over time into equal bins (LoadSeries): each bin
// ends up holding the quantity's mean over the bin.
struct SeriesBins {
    std::int64_t start = 0, bin_ns = 1;
    std::vector<double> sum;  // value x ns

    SeriesBins(std::int64_t s, std::int64_t width, std::size_t n) : start(s), bin_ns(std::max<std::int64_t>(1, width)), sum(n, 0.0) {}
    void add(std::int64_t from, std::int64_t to, double value) {
        if (value == 0 || sum.empty()) return;
        // Times read from a file may be anywhere in the int64 range: bin
        // edges are computed wide and held to it.
        auto edge = [&](std::size_t k) {
            const __int128 v = static_cast<__int128>(start) + static_cast<__int128>(bin_ns) * static_cast<__int128>(k);
            return static_cast<std::int64_t>(std::clamp<__int128>(v, INT64_MIN, INT64_MAX));
        };
        const std::int64_t end = edge(sum.size());
        from = std::max(from, start);
        to = std::min(to, end);
        while (from < to) {
            const auto b =
                static_cast<std::size_t>((static_cast<__int128>(from) - static_cast<__int128>(start)) / bin_ns);
            if (b >= sum.size()) break;
            const std::int64_t bin_end = edge(b + 1);
            const std::int64_t upto = std::min(to, bin_end);
            sum[b] += value * static_cast<double>(upto - from);
            from = upto;
        }
    }
    float mean(std::size_t b) const { return static_cast<float>(sum[b] / static_cast<double>(bin_ns)); }
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

    SeriesBins* bins = nullptr;  // where the demand over time is integrated; null: nowhere

    // Changes the demand by `delta` at time t.
    void change(std::int64_t t, double delta) {
        const bool was_over = demand > 1.0 + kEpsilon;
        tenths.add(level_of(demand), subtract_saturating(t, since));
        if (bins) bins->add(since, t, demand);
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

// The union of the over-demand episodes of the CPUs reported: total time
// (episodes of min_ns or more), and the window, first and last moment, and
// the windows the page shades (episodes of window_ns or more: the creator
// busy beside its new threads until its pthread_join, up to 20 ms on a
// loaded machine, is no start of an over-subscription). Each falls back to
// the shorter episodes when nothing else is left. \return the shortest
// episode the window kept.
std::int64_t measure_over_demand(NodeLoad& load, const std::vector<DemandTrack>& cpus, std::int64_t min_ns,
                                 std::int64_t window_ns) {
    std::vector<TimeSpan> all;
    for (unsigned cpu : load.over_demanded)
        if (cpu < cpus.size()) all.insert(all.end(), cpus[cpu].episodes.begin(), cpus[cpu].episodes.end());
    std::sort(all.begin(), all.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; });
    auto at_least = [&](std::int64_t ns) {
        std::vector<TimeSpan> out;
        std::copy_if(all.begin(), all.end(), std::back_inserter(out), [&](const TimeSpan& e) { return e.length_ns() >= ns; });
        return out;
    };
    std::vector<TimeSpan> counted = at_least(min_ns);
    const bool counted_all = counted.empty();
    if (counted_all) counted = all;
    std::int64_t covered_to = INT64_MIN;
    for (const TimeSpan& e : counted) {
        const std::int64_t from = std::max(e.start_ns, covered_to);
        if (e.end_ns > from) load.over_demanded_ns = add_saturating(load.over_demanded_ns, subtract_saturating(e.end_ns, from));
        covered_to = std::max(covered_to, e.end_ns);
    }
    std::int64_t shortest = std::max(window_ns, min_ns);
    std::vector<TimeSpan> window = at_least(shortest);
    if (window.empty()) {
        window = counted;
        shortest = counted_all ? 0 : min_ns;
    }
    for (const TimeSpan& e : window) {
        if (e.end_ns > e.start_ns) {
            auto& windows = load.series.over_windows;
            if (!windows.empty() && e.start_ns <= windows.back().end_ns)
                windows.back().end_ns = std::max(windows.back().end_ns, e.end_ns);
            else
                windows.push_back({e.start_ns, e.end_ns, -1});
        }
        if (load.first_over_demand_ns < 0) load.first_over_demand_ns = e.start_ns;
        load.last_over_demand_ns = std::max(load.last_over_demand_ns, e.end_ns);
    }
    return shortest;
}

// Episodes of a CPU's over-demand of at least min_ns, in time order.
std::vector<TimeSpan> long_episodes(const DemandTrack& track, std::int64_t min_ns) {
    std::vector<TimeSpan> out;
    for (const TimeSpan& e : track.episodes)
        if (e.length_ns() >= min_ns) out.push_back(e);
    return out;
}

// Time spans of `a` and `b` (each in time order, not overlapping) overlap, in all.
std::int64_t overlap_ns(const std::vector<TimeSpan>& a, const std::vector<TimeSpan>& b) {
    std::int64_t total = 0;
    std::size_t j = 0;
    for (const TimeSpan& x : a) {
        while (j < b.size() && b[j].end_ns <= x.start_ns) ++j;
        for (std::size_t k = j; k < b.size() && b[k].start_ns < x.end_ns; ++k) {
            const std::int64_t from = std::max(x.start_ns, b[k].start_ns), to = std::min(x.end_ns, b[k].end_ns);
            if (to > from) total = add_saturating(total, subtract_saturating(to, from));
        }
    }
    return total;
}

// Sorted, overlapping spans merged.
std::vector<TimeSpan> merged(std::vector<TimeSpan> spans) {
    std::sort(spans.begin(), spans.end(), [](const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; });
    std::vector<TimeSpan> out;
    for (const TimeSpan& s : spans) {
        if (!out.empty() && s.start_ns <= out.back().end_ns)
            out.back().end_ns = std::max(out.back().end_ns, s.end_ns);
        else
            out.push_back(s);
    }
    return out;
}

std::string seconds(std::int64_t ns) {
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 0.0995) return fmt::format("{:.0f} ms", s * 1e3);
    return s < 9.995 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} s", s);
}

}  // namespace

std::string seconds_text(std::int64_t ns) { return seconds(ns); }

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

namespace {

// "a–b" of two phrases with a unit, the unit said once when both share it
// ("9.70–10.0 s"); one phrase when they read alike.
std::string range_text(const std::string& low, const std::string& high) {
    if (low == high) return low;
    for (const char* unit : {" ms", " s"}) {
        const std::string u = unit;
        auto ends = [&](const std::string& s) {
            return s.size() > u.size() && s.compare(s.size() - u.size(), u.size(), u) == 0;
        };
        if (ends(low) && ends(high)) return low.substr(0, low.size() - u.size()) + "\u2013" + high;
    }
    return low + "\u2013" + high;
}

std::string seconds_range(std::int64_t low, std::int64_t high) { return range_text(seconds(low), seconds(high)); }

}  // namespace

std::string describe_over_demand_range(const std::vector<const NodeLoad*>& loads) {
    if (loads.empty()) return {};
    if (loads.size() == 1) return describe_over_demand(*loads.front());
    struct Span {
        std::int64_t low = INT64_MAX, high = INT64_MIN;
        void add(std::int64_t v) {
            low = std::min(low, v);
            high = std::max(high, v);
        }
    } over, run, from, to, percent;
    bool whole = true, timed = true;
    for (const NodeLoad* load : loads) {
        const std::int64_t r = load->run_ns();
        over.add(load->over_demanded_ns);
        run.add(r);
        from.add(std::max<std::int64_t>(0, subtract_saturating(load->first_over_demand_ns, load->run_start_ns)));
        to.add(std::max<std::int64_t>(0, subtract_saturating(load->last_over_demand_ns, load->run_start_ns)));
        if (r <= 0) {
            timed = false;
            continue;
        }
        const double p = 100.0 * static_cast<double>(load->over_demanded_ns) / static_cast<double>(r);
        if (p < 99.5) whole = false;
        percent.add(std::stoll(fmt::format("{:.0f}", p)));  // as describe_over_demand rounds it
    }
    const std::string window = "from " + seconds_range(from.low, from.high) + " to " + seconds_range(to.low, to.high);
    if (!timed) return seconds_range(over.low, over.high) + " (" + window + ")";
    if (whole) return "the whole run (" + seconds_range(run.low, run.high) + ")";
    return range_text(std::to_string(percent.low), std::to_string(percent.high)) + " % of the run (" +
           seconds_range(over.low, over.high) + " of " + seconds_range(run.low, run.high) + ", " + window + ")";
}

std::vector<std::uint32_t> NodeLoad::over_demand_flows() const {
    std::vector<std::uint32_t> out;
    for (const OverDemandShare& share : over_demand_shares)
        if (std::find(out.begin(), out.end(), share.flow) == out.end()) out.push_back(share.flow);
    return out;
}

namespace {

// A flow's busy time cut at its mask changes: for each interval, the
// pieces of busy time under it. Busy time before the first known mask is
// taken under it, after the last under that one.
struct MaskedBusy {
    std::uint32_t interval = 0;
    std::vector<TimeSpan> pieces;
};

std::vector<MaskedBusy> busy_under_masks(const FlowView& flow) {
    std::vector<MaskedBusy> out;
    const auto& ivs = flow.intervals;
    for (std::uint32_t i = 0; i < ivs.size(); ++i) {
        const std::int64_t from = i == 0 ? INT64_MIN : ivs[i].start_ns;
        const std::int64_t to = i + 1 < ivs.size() ? ivs[i + 1].start_ns : INT64_MAX;
        MaskedBusy m{i, {}};
        for (const TimeSpan& b : flow.busy) {
            if (b.end_ns <= b.start_ns) {
                // A busy instant goes to the mask held then.
                if (b.start_ns >= from && (b.start_ns < to || i + 1 == ivs.size())) m.pieces.push_back(b);
                continue;
            }
            const std::int64_t s = std::max(b.start_ns, from), e = std::min(b.end_ns, to);
            if (e > s) m.pieces.push_back({s, e, -1});
        }
        if (!m.pieces.empty()) out.push_back(std::move(m));
    }
    return out;
}

// Each busy flow under each of its masks is a slot: its available CPUs
// and cores, computed once (the sweep visits every piece twice), its
// process (an index into process_of), and its busy pieces.
struct Slot {
    std::vector<unsigned> cpus;
    std::vector<std::uint32_t> cores;
    std::uint32_t process = 0;
    std::uint32_t flow = 0;
    std::uint32_t interval = 0;
    std::vector<TimeSpan> pieces;
};

// A node's busy flows as slots, with the application processes they belong
// to and the start and end of each busy piece (the thread sweep's events).
struct BusySlots {
    std::vector<Slot> slots;
    std::vector<std::uint32_t> process_of;  // application processes with busy flows
    std::vector<Event> flow_events;
};

// The node's run: from its first process's start to its last one's end
// (launchers included).
void set_run_bounds(const RunView& view, const NodeView& node, NodeLoad& load) {
    bool any = false;
    for (const auto* list : {&node.processes, &node.launchers})
        for (std::uint32_t p : *list) {
            const ProcessView& process = view.processes[p];
            load.run_start_ns = any ? std::min(load.run_start_ns, process.start_ns) : process.start_ns;
            load.run_end_ns = any ? std::max(load.run_end_ns, process.end_ns) : process.end_ns;
            any = true;
        }
}

// Slots of every busy flow of the node's application processes; sets the
// CPUs they reserve, the active flows and the processes' busy entries.
BusySlots collect_busy_slots(const RunView& view, const NodeView& node, std::int64_t threshold, NodeLoad& load) {
    BusySlots busy;
    std::vector<Slot>& slots = busy.slots;
    std::vector<std::uint32_t>& process_of = busy.process_of;
    std::vector<Event>& flow_events = busy.flow_events;
    for (std::uint32_t p : node.processes) {
        const auto process_slot = static_cast<std::uint32_t>(process_of.size());
        bool has_busy = false;
        for (std::uint32_t f : view.processes[p].flows) {
            const FlowView& flow = view.flows[f];
            if (flow.service || flow.busy.empty()) continue;
            bool flow_counted = false;
            // The CPUs reserved for the flow: those of the mask it was busy
            // under longest, and of any other it was busy under for the
            // threshold. A mask held for moments (the launcher's, before
            // taskset or a runtime bound the thread) reserves nothing.
            Cpuset longest_mask;
            std::int64_t longest_ns = -1;
            for (MaskedBusy& m : busy_under_masks(flow)) {
                const Cpuset placed = flow.intervals[m.interval].cpuset & node.available;
                if (placed.empty()) continue;
                const auto slot = static_cast<std::uint32_t>(slots.size());
                std::int64_t busy_ns = 0;
                for (const TimeSpan& b : m.pieces) {
                    flow_events.push_back({b.start_ns, true, slot});
                    flow_events.push_back({std::max(b.end_ns, b.start_ns), false, slot});
                    busy_ns = add_saturating(busy_ns, b.length_ns());
                }
                if (busy_ns > longest_ns) {
                    longest_ns = busy_ns;
                    longest_mask = placed;
                }
                // Busy time before the program's last exec is its launcher's
                // (taskset, a shell): it reserves nothing of the program's.
                const bool before_program =
                    m.interval + 1 < flow.intervals.size() &&
                    flow.intervals[m.interval].end_ns <= view.processes[flow.process].program_start_ns;
                if (busy_ns >= threshold && !before_program) load.reserved |= placed;
                slots.push_back({std::vector<unsigned>(placed.begin(), placed.end()), node.cores_touching(placed),
                                 process_slot, f, m.interval, std::move(m.pieces)});
                flow_counted = true;
            }
            if (!flow_counted) continue;
            // A flow busy for moments only (a shell that exec'ed, a main
            // thread that waits in a join) reserves the mask it held longest
            // in time, not the one it happened to compute under before exec.
            if (longest_ns < threshold && !(flow.placement & node.available).empty())
                longest_mask = flow.placement & node.available;
            load.reserved |= longest_mask;
            load.active_flows.push_back(f);
            has_busy = true;
        }
        if (has_busy) {
            process_of.push_back(p);
            load.process_peak_flows.emplace_back(p, 0);
        }
    }
    return busy;
}

// The thread-granularity sweep's results beside NodeLoad: the demand of
// each CPU and core over time, and the series' bins.
struct DemandSweep {
    std::vector<SeriesBins> cpu_bins;
    SeriesBins busy_bins;
    std::vector<DemandTrack> cpu_track, core_track;
};

// Thread granularity: fractional demand per CPU and per core, and how many
// distinct CPUs the busy flows' masks cover. Events of one moment are
// applied together; time is counted between moments. Sets the peaks, the
// crowded and over-demanded CPUs and the busy time of each process.
// per_cpu_bins: integrate each CPU's demand into the series' bins, which
// only the series' rows read (it was 60 % of the sweep's time).
DemandSweep sweep_thread_demand(const NodeView& node, BusySlots& busy, std::int64_t threshold, std::size_t bins,
                                std::int64_t bin_ns, bool per_cpu_bins, NodeLoad& load) {
    const std::size_t cpus = node.available.end_index();
    const std::vector<Slot>& slots = busy.slots;
    const std::vector<std::uint32_t>& process_of = busy.process_of;
    std::vector<Event>& flow_events = busy.flow_events;
    DemandSweep d{{}, SeriesBins(load.run_start_ns, bin_ns, bins), std::vector<DemandTrack>(cpus),
                  std::vector<DemandTrack>(node.cores.size())};
    if (bins && per_cpu_bins) d.cpu_bins.assign(cpus, SeriesBins(load.run_start_ns, bin_ns, bins));
    std::vector<DemandTrack>& cpu_track = d.cpu_track;
    std::vector<DemandTrack>& core_track = d.core_track;
    SeriesBins& busy_bins = d.busy_bins;
    if (!d.cpu_bins.empty())
        for (unsigned cpu = 0; cpu < cpus; ++cpu) cpu_track[cpu].bins = &d.cpu_bins[cpu];
    std::vector<std::uint32_t> cpu_users(cpus, 0);  // busy slots whose mask holds the CPU
    std::size_t covered = 0;                          // CPUs with a user
    LevelTimes flows_at, crowded_flows_at, crowded_processes_at;
    std::vector<LevelTimes> process_flows_at(process_of.size());
    std::vector<std::size_t> process_alive(process_of.size(), 0);
    std::vector<std::int64_t> process_since(process_of.size(), 0);  // when its count last changed
    std::size_t processes_alive = 0;
    sort_events(flow_events);
    std::size_t alive = 0;
    for (std::size_t i = 0; i < flow_events.size();) {
        const std::int64_t t = flow_events[i].t;
        if (i > 0) {
            const std::int64_t prev = flow_events[i - 1].t;
            const std::int64_t dt = subtract_saturating(t, prev);
            flows_at.add(alive, dt);
            busy_bins.add(prev, t, static_cast<double>(alive));
            if (alive > covered && dt > 0) {
                load.crowded_ns = add_saturating(load.crowded_ns, dt);
                crowded_flows_at.add(alive, dt);
                crowded_processes_at.add(processes_alive, dt);
                for (unsigned cpu = 0; cpu < cpus; ++cpu)
                    if (cpu_users[cpu] > 0) load.crowded_cpus.set(cpu);
            }
        }
        for (; i < flow_events.size() && flow_events[i].t == t; ++i) {
            const Event& e = flow_events[i];
            const Slot& slot = slots[e.who];
            const double sign = e.start ? 1.0 : -1.0;
            const double share = sign / static_cast<double>(slot.cpus.size());
            for (unsigned cpu : slot.cpus) {
                cpu_track[cpu].change(t, share);
                if (e.start) {
                    if (cpu_users[cpu]++ == 0) ++covered;
                } else if (cpu_users[cpu] > 0 && --cpu_users[cpu] == 0) {
                    --covered;
                }
            }
            const double core_share = sign / static_cast<double>(slot.cores.size());
            for (std::uint32_t c : slot.cores) core_track[c].change(t, core_share);
            alive = e.start ? alive + 1 : alive - 1;
            flows_at.saw(alive);
            std::size_t& mine = process_alive[slot.process];
            const std::int64_t held = subtract_saturating(t, process_since[slot.process]);
            process_flows_at[slot.process].add(mine, held);
            if (mine > 0) load.process_busy_ns[slot.process] = add_saturating(load.process_busy_ns[slot.process], held);
            process_since[slot.process] = t;
            const std::size_t before = mine;
            mine = e.start ? mine + 1 : mine - 1;
            if (before == 0 && mine > 0) ++processes_alive;
            if (before > 0 && mine == 0) --processes_alive;
            process_flows_at[slot.process].saw(mine);
            if (alive > covered) {
                crowded_flows_at.saw(alive);
                crowded_processes_at.saw(processes_alive);
                if (e.start && load.crowded_ns == 0)
                    for (unsigned cpu = 0; cpu < cpus; ++cpu)
                        if (cpu_users[cpu] > 0) load.crowded_instant_cpus.set(cpu);
            }
        }
    }
    load.peak_flows = flows_at.sustained_peak(threshold);
    for (std::size_t s = 0; s < process_of.size(); ++s)
        load.process_peak_flows[s].second = process_flows_at[s].sustained_peak(threshold);
    load.crowded_peak_flows = crowded_flows_at.sustained_peak(threshold);
    load.crowded_peak_processes = crowded_processes_at.sustained_peak(threshold);
    for (unsigned cpu = 0; cpu < cpus; ++cpu)
        if (cpu_track[cpu].over_ns >= threshold && cpu_track[cpu].over_ns > 0) load.over_demanded.set(cpu);
    for (std::uint32_t c = 0; c < node.cores.size(); ++c)
        if (core_track[c].over_ns >= threshold && core_track[c].over_ns > 0) load.core_over_demanded |= node.cores[c];
    for (const DemandTrack& d : cpu_track)
        load.peak_demand = std::max(load.peak_demand, static_cast<double>(d.tenths.sustained_peak(threshold)) / 10.0);
    return d;
}

// The processes that made the demand: busy while CPUs were over-demanded
// for the threshold in all (a pool's parent that computed before it forked
// its workers and then waited for them is not one).
void find_over_demand_processes(const BusySlots& busy, const std::vector<DemandTrack>& cpu_track,
                            std::int64_t threshold, NodeLoad& load) {
const std::vector<Slot>& slots = busy.slots;
const std::vector<std::uint32_t>& process_of = busy.process_of;
    std::vector<TimeSpan> over;
    for (unsigned cpu : load.over_demanded)
        if (cpu < cpu_track.size())
            over.insert(over.end(), cpu_track[cpu].episodes.begin(), cpu_track[cpu].episodes.end());
    over = merged(std::move(over));
    std::vector<std::vector<TimeSpan>> busy_of(process_of.size());
    for (const Slot& slot : slots)
        busy_of[slot.process].insert(busy_of[slot.process].end(), slot.pieces.begin(), slot.pieces.end());
    for (std::size_t s = 0; s < process_of.size(); ++s) {
        const std::int64_t during = overlap_ns(merged(std::move(busy_of[s])), over);
        if (during >= threshold && during > 0) load.over_demand_processes.push_back(process_of[s]);
    }
}

// Who was busy on the over-demanded CPUs while they were (in the episodes
// the window kept), under which mask. Masks are few (threads of a team
// share one): the episodes of each mask's over-demanded CPUs are merged once.
void attribute_over_demand(const BusySlots& busy, const std::vector<DemandTrack>& cpu_track,
                           std::int64_t window_episode_ns, NodeLoad& load) {
    const std::vector<Slot>& slots = busy.slots;
    std::map<std::vector<unsigned>, std::vector<TimeSpan>> episodes_of_mask;
    for (const Slot& slot : slots) {
        auto it = episodes_of_mask.find(slot.cpus);
        if (it == episodes_of_mask.end()) {
            std::vector<TimeSpan> all;
            for (unsigned cpu : slot.cpus)
                if (load.over_demanded.contains(cpu)) {
                    std::vector<TimeSpan> mine = long_episodes(cpu_track[cpu], window_episode_ns);
                    all.insert(all.end(), mine.begin(), mine.end());
                }
            it = episodes_of_mask.emplace(slot.cpus, merged(std::move(all))).first;
        }
        if (it->second.empty()) continue;
        const std::int64_t ns = overlap_ns(slot.pieces, it->second);
        if (ns > 0) load.over_demand_shares.push_back({slot.flow, slot.interval, ns});
    }
    std::stable_sort(load.over_demand_shares.begin(), load.over_demand_shares.end(),
                     [](const OverDemandShare& a, const OverDemandShare& b) { return a.ns > b.ns; });
    // A share as short as a creator's stretch beside its new threads
    // names no competitor, unless every share is that short (a burst of
    // short threads).
    auto& shares = load.over_demand_shares;
    if (!shares.empty() && shares.front().ns >= window_episode_ns)
        std::erase_if(shares, [&](const OverDemandShare& x) { return x.ns < window_episode_ns; });
}

// The load series: per CPU the flows may use, or per group of cores.
void build_load_series(const NodeView& node, const DemandSweep& d, std::size_t bins, std::int64_t bin_ns,
                       const NodeLoadOptions& options, NodeLoad& load) {
    const std::vector<SeriesBins>& cpu_bins = d.cpu_bins;
    const SeriesBins& busy_bins = d.busy_bins;
    LoadSeries& series = load.series;
    series.start_ns = load.run_start_ns;
    series.bin_ns = bin_ns;
    series.bins = bins;
    series.busy_flows.resize(bins);
    for (std::size_t b = 0; b < bins; ++b) series.busy_flows[b] = busy_bins.mean(b);
    if (!options.series_rows) return;
    // One row per CPU the flows may use; beyond series_max_rows, one per
    // group of consecutive cores (their CPUs the flows may use).
    const std::size_t rows = std::max<std::size_t>(1, options.series_max_rows);
    std::vector<Cpuset> row_cpus;
    if (load.reserved.count() <= rows) {
        for (unsigned cpu : load.reserved) {
            Cpuset one;
            one.set(cpu);
            row_cpus.push_back(one);
        }
    } else {
        const std::vector<std::uint32_t> used = node.cores_touching(load.reserved);
        const std::size_t per_row = (used.size() + rows - 1) / rows;
        for (std::size_t first = 0; first < used.size(); first += per_row) {
            Cpuset group;
            for (std::size_t c = first; c < std::min(used.size(), first + per_row); ++c) group |= node.cores[used[c]];
            row_cpus.push_back(group & load.reserved);
        }
    }
    for (Cpuset& cpus_of_row : row_cpus) {
        LoadSeries::Row row;
        row.cpus = std::move(cpus_of_row);
        row.demand.assign(bins, 0.0F);
        const auto width = static_cast<float>(std::max<std::size_t>(1, row.cpus.count()));
        for (unsigned cpu : row.cpus)
            for (std::size_t b = 0; b < bins; ++b) row.demand[b] += cpu_bins[cpu].mean(b) / width;
        row.over_demanded = row.cpus.intersects(load.over_demanded);
        series.rows.push_back(std::move(row));
    }
}

// Process granularity: how many processes may use each CPU at one moment.
// A flow counts under each mask from its first to its last busy moment
// under it; a process is there while one of its flows is. Sets the shared
// CPUs and the peak of processes.
void sweep_process_sharing(const BusySlots& busy, std::size_t cpus, std::int64_t threshold, NodeLoad& load) {
    const std::vector<Slot>& slots = busy.slots;
    const std::vector<std::uint32_t>& process_of = busy.process_of;
    std::vector<Event> process_events;
    for (std::uint32_t i = 0; i < slots.size(); ++i) {
        const Slot& slot = slots[i];
        process_events.push_back({slot.pieces.front().start_ns, true, i});
        process_events.push_back({std::max(slot.pieces.back().end_ns, slot.pieces.front().start_ns), false, i});
    }
    sort_events(process_events);
    // Per CPU, the slots of each process that may use it (processes with a user: users).
    std::vector<std::unordered_map<std::uint32_t, std::uint32_t>> slots_of_process(cpus);
    std::vector<std::uint32_t> users(cpus, 0);
    std::vector<std::int64_t> shared_since(cpus, -1), shared_ns(cpus, 0);
    std::vector<std::uint32_t> present(process_of.size(), 0);
    LevelTimes processes_at;
    std::size_t processes_alive = 0;
    for (std::size_t i = 0; i < process_events.size();) {
        const std::int64_t t = process_events[i].t;
        if (i > 0) processes_at.add(processes_alive, subtract_saturating(t, process_events[i - 1].t));
        for (; i < process_events.size() && process_events[i].t == t; ++i) {
            const Event& e = process_events[i];
            const Slot& slot = slots[e.who];
            for (unsigned cpu : slot.cpus) {
                const bool was_shared = users[cpu] >= 2;
                std::uint32_t& n = slots_of_process[cpu][slot.process];
                if (e.start) {
                    if (n++ == 0) ++users[cpu];
                } else if (n > 0 && --n == 0) {
                    --users[cpu];
                }
                const bool is_shared = users[cpu] >= 2;
                if (!was_shared && is_shared) shared_since[cpu] = t;
                if (was_shared && !is_shared) shared_ns[cpu] = add_saturating(shared_ns[cpu], subtract_saturating(t, shared_since[cpu]));
            }
            std::uint32_t& here = present[slot.process];
            if (e.start) {
                if (here++ == 0) ++processes_alive;
            } else if (here > 0 && --here == 0) {
                --processes_alive;
            }
            processes_at.saw(processes_alive);
        }
    }
    for (unsigned cpu = 0; cpu < cpus; ++cpu)
        if (shared_ns[cpu] >= threshold && shared_ns[cpu] > 0) load.shared.set(cpu);
    load.peak_processes = processes_at.sustained_peak(threshold);
}

}  // namespace

NodeLoad compute_node_load(const RunView& view, std::uint32_t node_index, const NodeLoadOptions& options) {
    const NodeView& node = view.nodes[node_index];
    NodeLoad load;
    set_run_bounds(view, node, load);
    const auto by_fraction = static_cast<std::int64_t>(options.min_overload_fraction * static_cast<double>(load.run_ns()));
    const std::int64_t threshold = std::max(options.min_overload_ns, by_fraction);
    load.threshold_ns = threshold;

    BusySlots busy = collect_busy_slots(view, node, threshold, load);
    load.active_processes = busy.process_of.size();
    load.process_busy_ns.assign(busy.process_of.size(), 0);

    // The load series' bins over the node's run.
    const std::size_t bins = load.run_ns() > 0 ? std::max<std::size_t>(1, options.series_bins) : 0;
    const std::int64_t bin_ns =
        bins ? std::max<std::int64_t>(1, (load.run_ns() + static_cast<std::int64_t>(bins) - 1) / static_cast<std::int64_t>(bins)) : 1;
    const DemandSweep demand = sweep_thread_demand(node, busy, threshold, bins, bin_ns, options.series_rows, load);
    const std::int64_t window_episode_ns =
        measure_over_demand(load, demand.cpu_track, options.min_window_episode_ns,
                            std::max(threshold / 4, options.creator_stretch_ns));
    if (!load.over_demanded.empty()) {
        find_over_demand_processes(busy, demand.cpu_track, threshold, load);
        attribute_over_demand(busy, demand.cpu_track, window_episode_ns, load);
    }
    if (bins) build_load_series(node, demand, bins, bin_ns, options, load);
    sweep_process_sharing(busy, node.available.end_index(), threshold, load);
    return load;
}

}  // namespace stacksage
