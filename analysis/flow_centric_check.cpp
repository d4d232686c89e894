#include "analysis/flow_centric_check.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/flow_refs.hpp"

namespace stacksage {

std::vector<Finding> check_flow_centric(const RunView& view) {
    std::vector<NodeLoad> loads;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) loads.push_back(compute_node_load(view, n));
    return check_flow_centric(view, loads);
}

std::vector<Finding> check_flow_centric(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        const NodeLoad& load = loads[n];
        if (load.active_flows.empty()) continue;
        const std::size_t threads = load.peak_flows;
        std::size_t cores = node.cores_count(load.reserved);
        const std::size_t cpus = load.reserved.count();
        // A cgroup quota below the CPUs reserved is what the threads can use
        // at once (0.5 CPU: one thread already fills it).
        const bool quota_limits = node.cpu_quota > 0 && node.cpu_quota < static_cast<double>(cpus);
        const std::string quota = quota_limits ? describe_cpu_quota(node.cpu_quota) : std::string();
        Finding f;
        f.check = "flow-centric";
        f.node = std::string(node.host);
        f.resources = load.reserved;
        f.severity = Severity::Warning;
        f.figures = {{"threads", static_cast<std::int64_t>(threads)},
                     {"processes", static_cast<std::int64_t>(load.peak_processes)},
                     {"cores", static_cast<std::int64_t>(cores)},
                     {"cpus", static_cast<std::int64_t>(cpus)}};
        const std::string where = describe_cpus(node, load.reserved);
        const std::string who = std::to_string(threads) + (threads == 1 ? " thread" : " threads") + " of " +
                                std::to_string(load.peak_processes) +
                                (load.peak_processes == 1 ? " process" : " processes");
        if (quota_limits) {
            f.figures.push_back({"quota_cpus_x100", static_cast<std::int64_t>(std::lround(node.cpu_quota * 100))});
            // The cores the quota can keep busy: a partial CPU still needs a core to run on.
            cores = std::min(cores, static_cast<std::size_t>(std::ceil(node.cpu_quota - 1e-9)));
        }
        if (quota_limits && static_cast<double>(threads) > node.cpu_quota + 1e-9) {
            f.code = FindingCode::OverloadedReservation;
            f.message = who + " may run at once under a CPU quota of " + quota + " (on " + where +
                        "): the reservation is overloaded";
        } else if (!quota_limits && threads > cpus) {
            f.code = FindingCode::OverloadedReservation;
            f.message = who + " may run at once on the " + std::to_string(cores) +
                        (cores == 1 ? " core" : " cores") + " reserved for them (" + where +
                        "): the reservation is overloaded";
        } else if (threads < cores) {
            f.code = FindingCode::UnderloadedReservation;
            const std::size_t spare = cores - threads;
            f.message = "Only " + who + " for the " + std::to_string(cores) + " cores reserved for them (" +
                        where + "): " + std::to_string(spare) + (spare == 1 ? " core" : " cores") +
                        " may stay idle (underloaded reservation)";
            f.figures.push_back({"spare_cores", static_cast<std::int64_t>(spare)});
        } else {
            continue;
        }
        attach_flows(f, view, load.active_flows);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace stacksage
