#include "analysis/flow_centric_check.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "analysis/flow_refs.hpp"

namespace stacksage {

std::vector<Finding> check_flow_centric(const RunView& view) {
    std::vector<NodeLoad> loads;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) loads.push_back(compute_node_load(view, n));
    return check_flow_centric(view, loads);
}

namespace {

std::string threads_of_processes(std::size_t threads, std::size_t processes) {
    return std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " of " + std::to_string(processes) +
           (processes == 1 ? " process" : " processes");
}

std::int64_t quota_x100(const NodeView& node) { return static_cast<std::int64_t>(std::lround(node.cpu_quota * 100)); }

// Overloaded under a quota: more threads at once than the quota's CPUs.
std::optional<Finding> reservation_over_quota(const RunView& view, const NodeView& node, const NodeLoad& load) {
    if (static_cast<double>(load.peak_flows) <= node.cpu_quota + 1e-9) return std::nullopt;
    Finding f;
    const std::size_t processes = std::max<std::size_t>(1, load.peak_processes);
    f.code = FindingCode::OverloadedReservation;
    f.resources = load.reserved;
    f.message = threads_of_processes(load.peak_flows, processes) + " may run at once under a CPU quota of " +
                describe_cpu_quota(node.cpu_quota) + " (on " + describe_cpus(node, load.reserved) +
                "): the reservation is overloaded";
    f.figures = {{"threads", static_cast<std::int64_t>(load.peak_flows)},
                 {"processes", static_cast<std::int64_t>(processes)},
                 {"cores", static_cast<std::int64_t>(node.cores_count(load.reserved))},
                 {"cpus", static_cast<std::int64_t>(load.reserved.count())},
                 {"quota_cpus_x100", quota_x100(node)}};
    attach_flows(f, view, load.active_flows);
    return f;
}

// Overloaded: at some moments more flows were busy than the CPUs their
// masks held then, for the threshold in all. Flows are counted where they
// overlap in time: a shell of a few milliseconds before the ranks start
// competes with none of them. A run shorter than the threshold (a process
// killed within milliseconds) holds nothing that long: it is judged on its
// peaks.
std::optional<Finding> crowded_reservation(const RunView& view, const NodeView& node, const NodeLoad& load) {
    const bool crowded = load.crowded_ns >= load.threshold_ns && load.crowded_ns > 0;
    const bool too_short_to_hold = load.run_ns() < load.threshold_ns;
    if (!(crowded || too_short_to_hold) || load.crowded_peak_flows == 0) return std::nullopt;
    const Cpuset crowded_cpus = crowded ? load.crowded_cpus : load.crowded_cpus | load.crowded_instant_cpus;
    const std::size_t threads = load.crowded_peak_flows;
    const std::size_t processes = std::max<std::size_t>(1, load.crowded_peak_processes);
    const std::size_t cores = node.cores_count(crowded_cpus);
    const std::size_t cpus = crowded_cpus.count();
    if (threads <= cpus) return std::nullopt;
    Finding f;
    f.code = FindingCode::OverloadedReservation;
    f.resources = crowded_cpus;
    f.message = threads_of_processes(threads, processes) + " may run at once on the " + std::to_string(cores) +
                (cores == 1 ? " core" : " cores") + " reserved for them (" + describe_cpus(node, crowded_cpus) +
                "): the reservation is overloaded";
    const std::int64_t run = load.run_ns();
    if (run > 0 && static_cast<double>(load.crowded_ns) < 0.995 * static_cast<double>(run))
        f.message += " for " + seconds_text(load.crowded_ns) + " of the " + seconds_text(run) + " run";
    f.figures = {{"threads", static_cast<std::int64_t>(threads)},
                 {"processes", static_cast<std::int64_t>(processes)},
                 {"cores", static_cast<std::int64_t>(cores)},
                 {"cpus", static_cast<std::int64_t>(cpus)},
                 {"crowded_ms", load.crowded_ns / 1'000'000}};
    std::vector<std::uint32_t> flows;
    for (std::uint32_t i : load.active_flows)
        for (const AffinityInterval& iv : view.flows[i].intervals)
            if (iv.cpuset.intersects(crowded_cpus)) {
                flows.push_back(i);
                break;
            }
    attach_flows(f, view, flows);
    return f;
}

// Underloaded: fewer flows computing at once than the cores reserved for
// them (under a quota: than the cores it can keep busy).
std::optional<Finding> underloaded_reservation(const RunView& view, const NodeView& node, const NodeLoad& load,
                                               bool quota_limits) {
    const std::size_t threads = load.peak_flows;
    const std::size_t processes = load.peak_processes;
    std::size_t cores = node.cores_count(load.reserved);
    const std::size_t cpus = load.reserved.count();
    // The cores a quota can keep busy: a partial CPU still needs a core to run on.
    if (quota_limits) cores = std::min(cores, static_cast<std::size_t>(std::ceil(node.cpu_quota - 1e-9)));
    if (threads >= cores) return std::nullopt;
    Finding f;
    f.code = FindingCode::UnderloadedReservation;
    f.resources = load.reserved;
    const std::size_t spare = cores - threads;
    // Processes that computed, but never at the same time as each other
    // (children run one after another): counted at once, they are one.
    const std::size_t busy_processes = load.process_peak_flows.size();
    const bool one_after_another = busy_processes > 1 && processes <= 1;
    f.message = "Only " + threads_of_processes(threads, processes) + " for the " + std::to_string(cores) +
                " cores reserved for them (" + describe_cpus(node, load.reserved) + "): " + std::to_string(spare) +
                (spare == 1 ? " core" : " cores") + " may stay idle (underloaded reservation)";
    if (one_after_another)
        f.message += "; its " + std::to_string(busy_processes) + " processes ran one after another, never two at once";
    f.figures = {{"threads", static_cast<std::int64_t>(threads)},
                 {"processes", static_cast<std::int64_t>(processes)},
                 {"cores", static_cast<std::int64_t>(cores)},
                 {"cpus", static_cast<std::int64_t>(cpus)},
                 {"spare_cores", static_cast<std::int64_t>(spare)},
                 {"sequential_processes", static_cast<std::int64_t>(one_after_another ? busy_processes : 0)}};
    if (quota_limits) f.figures.push_back({"quota_cpus_x100", quota_x100(node)});
    attach_flows(f, view, load.active_flows);
    return f;
}

}  // namespace

std::vector<Finding> check_flow_centric(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        const NodeLoad& load = loads[n];
        if (load.active_flows.empty()) continue;
        // A cgroup quota below the CPUs reserved is what the threads can use
        // at once (0.5 CPU: one thread already fills it).
        const bool quota_limits = node.cpu_quota > 0 && node.cpu_quota < static_cast<double>(load.reserved.count());
        std::optional<Finding> f =
            quota_limits ? reservation_over_quota(view, node, load) : crowded_reservation(view, node, load);
        if (!f) f = underloaded_reservation(view, node, load, quota_limits);
        if (!f) continue;
        f->check = "flow-centric";
        f->node = std::string(node.host);
        f->severity = Severity::Warning;
        out.push_back(std::move(*f));
    }
    return out;
}

}  // namespace stacksage
