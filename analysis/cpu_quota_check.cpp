#include "analysis/cpu_quota_check.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "analysis/flow_refs.hpp"
#include "core/saturating.hpp"

namespace stacksage {

namespace {

// One quota cgroup's processes on a node, and its counters over their lives.
struct QuotaGroup {
    CpuQuotaView quota;  // of its first process
    std::vector<std::uint32_t> processes;
    std::int64_t periods_start = -1, throttled_start = -1, throttled_ns_start = -1;  // the earliest readings
    std::int64_t periods_end = -1, throttled_end = -1, throttled_ns_end = -1;        // the latest

    // The counters only grow: the earliest start is the smallest, the latest end the largest.
    static void lower(std::int64_t& kept, std::int64_t v) {
        if (v >= 0 && (kept < 0 || v < kept)) kept = v;
    }
    static void raise(std::int64_t& kept, std::int64_t v) {
        if (v >= 0 && v > kept) kept = v;
    }
    void add(std::uint32_t p, const CpuQuotaView& q) {
        if (processes.empty()) quota = q;
        // The smallest quota seen (a quota changed while the job ran).
        if (q.cpus() < quota.cpus()) {
            quota.quota_us = q.quota_us;
            quota.period_us = q.period_us;
        }
        processes.push_back(p);
        lower(periods_start, q.periods_start);
        lower(throttled_start, q.throttled_start);
        lower(throttled_ns_start, q.throttled_ns_start);
        raise(periods_end, q.periods_end);
        raise(throttled_end, q.throttled_end);
        raise(throttled_ns_end, q.throttled_ns_end);
    }
    static std::int64_t delta(std::int64_t start, std::int64_t end) {
        return start >= 0 && end >= start ? end - start : -1;
    }
};

// The most of these flows alive at once for at least `threshold` in all.
// A throttled thread gets a sliver of a CPU in bursts: its busy intervals
// (activity.hpp) may not overlap its team-mates' though all of them wanted
// a CPU the whole time, so the quota is judged by the active threads alive.
std::size_t peak_alive(const RunView& view, const std::vector<std::uint32_t>& flows, std::int64_t threshold) {
    std::vector<std::pair<std::int64_t, int>> events;
    for (std::uint32_t i : flows) {
        events.emplace_back(view.flows[i].start_ns, 1);
        events.emplace_back(std::max(view.flows[i].end_ns, view.flows[i].start_ns), -1);
    }
    std::sort(events.begin(), events.end());  // at one moment ends (-1) before starts
    std::vector<std::int64_t> time_at;        // time spent with exactly k alive
    std::size_t alive = 0;
    for (std::size_t e = 0; e < events.size(); ++e) {
        if (e > 0 && alive > 0) {
            if (time_at.size() <= alive) time_at.resize(alive + 1, 0);
            time_at[alive] = add_saturating(time_at[alive], subtract_saturating(events[e].first, events[e - 1].first));
        }
        alive = events[e].second > 0 ? alive + 1 : alive - 1;
    }
    std::int64_t at_least = 0;
    for (std::size_t level = time_at.size(); level-- > 1;) {
        at_least = add_saturating(at_least, time_at[level]);
        if (at_least >= threshold) return level;
    }
    return 0;
}

std::string seconds(std::int64_t ns) {
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 0.0995) return fmt::format("{:.0f} ms", s * 1e3);
    return s < 9.995 ? fmt::format("{:.2f} s", s) : fmt::format("{:.1f} s", s);
}

Finding throttled_finding(const RunView& view, const NodeView& node, const NodeLoad& load, const QuotaGroup& g,
                          std::int64_t periods, std::int64_t throttled, std::int64_t throttled_ns) {
    Finding f;
    f.code = FindingCode::CpuQuotaThrottled;
    f.severity = Severity::Warning;
    f.check = "cpu-quota";
    f.node = std::string(node.host);
    const double cpus = g.quota.cpus();
    const std::string quota = describe_cpu_quota(cpus);
    std::vector<std::uint32_t> flows;
    Cpuset used;
    std::size_t busy_threads = 0;
    for (std::uint32_t p : g.processes) {
        for (std::uint32_t i : load.active_flows)
            if (view.flows[i].process == p) {
                flows.push_back(i);
                used |= view.flows[i].placement;
            }
        for (const auto& [process, peak] : load.process_peak_flows)
            if (process == p) busy_threads += peak;
    }
    busy_threads = std::max(busy_threads, peak_alive(view, flows, load.threshold_ns));
    f.resources = used & node.available;
    const std::string cgroup = g.quota.cgroup.empty() ? std::string() : " (cgroup " + std::string(g.quota.cgroup) + ")";
    f.message = "The CPU quota of " + quota + cgroup + " held the job's threads back in " + std::to_string(throttled) +
                " of " + std::to_string(periods) + " periods, " + seconds(throttled_ns) + " in all (throttled)";
    const std::size_t n = g.processes.size();
    f.detail = "the quota allows " + std::to_string(g.quota.quota_us / 1000) + " ms of CPU time per " +
               std::to_string(g.quota.period_us / 1000) + " ms period, shared by every thread of the cgroup; " +
               std::to_string(busy_threads) + (busy_threads == 1 ? " thread" : " threads") + " of " +
               std::to_string(n) + (n == 1 ? " process" : " processes") + " computed at once" +
               (node.available.empty() ? std::string()
                                       : " while the cpuset offered " + std::to_string(node.available.count()) +
                                             (node.available.count() == 1 ? " CPU" : " CPUs"));
    f.figures = {{"throttled_periods", throttled},
                 {"periods", periods},
                 {"throttled_ms", throttled_ns / 1'000'000},
                 {"quota_us", g.quota.quota_us},
                 {"period_us", g.quota.period_us},
                 {"quota_cpus_x100", static_cast<std::int64_t>(std::lround(cpus * 100))},
                 {"threads", static_cast<std::int64_t>(busy_threads)},
                 {"processes", static_cast<std::int64_t>(n)}};
    attach_flows(f, view, flows);
    return f;
}

}  // namespace

std::vector<Finding> check_cpu_quota(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        std::vector<QuotaGroup> groups;
        for (std::uint32_t p : node.processes) {
            const CpuQuotaView& q = view.processes[p].cpu_quota;
            if (!q.present()) continue;
            auto it = std::find_if(groups.begin(), groups.end(), [&](const QuotaGroup& g) {
                return !q.cgroup.empty() && g.quota.cgroup == q.cgroup;
            });
            if (it == groups.end()) it = groups.insert(groups.end(), QuotaGroup{});
            it->add(p, q);
        }
        for (const QuotaGroup& g : groups) {
            const std::int64_t periods = QuotaGroup::delta(g.periods_start, g.periods_end);
            const std::int64_t throttled = QuotaGroup::delta(g.throttled_start, g.throttled_end);
            const std::int64_t throttled_ns = QuotaGroup::delta(g.throttled_ns_start, g.throttled_ns_end);
            if (throttled <= 0 || throttled_ns < kMinThrottledNs) continue;
            out.push_back(
                throttled_finding(view, node, loads[n], g, std::max(periods, throttled), throttled, throttled_ns));
        }
    }
    return out;
}

}  // namespace stacksage
