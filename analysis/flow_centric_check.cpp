#include "analysis/flow_centric_check.hpp"

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
        const std::size_t cores = node.cores_count(load.reserved);
        const std::size_t cpus = load.reserved.count();
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
        if (threads > cpus) {
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
