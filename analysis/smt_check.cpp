#include "analysis/smt_check.hpp"

#include "analysis/flow_refs.hpp"

namespace stacksage {

std::vector<Finding> check_smt(const RunView& view) {
    std::vector<NodeLoad> loads;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) loads.push_back(compute_node_load(view, n));
    return check_smt(view, loads);
}

std::vector<Finding> check_smt(const RunView& view, const std::vector<NodeLoad>& loads) {
    std::vector<Finding> out;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        const NodeLoad& load = loads[n];
        if (!node.smt || load.active_flows.empty()) continue;
        const Cpuset busy = node.widen_to_cores(load.reserved);
        const std::size_t busy_cores = node.cores_count(busy);
        // Hardware threads of busy cores that no flow may use, or that the
        // flows cannot fill because there are no more threads than cores.
        Cpuset unused = busy - load.reserved;
        const bool too_few_threads = load.peak_flows <= busy_cores && load.reserved.count() > busy_cores;
        if (!unused.empty() || too_few_threads) {
            Finding f;
            f.code = FindingCode::SmtUnusedHardwareThreads;
            f.severity = Severity::Info;
            f.check = "smt";
            f.node = std::string(node.host);
            const bool all_busy = idle_cores(node, load.reserved).empty();
            if (!unused.empty()) {
                f.resources = unused;
                f.message = std::string(all_busy ? "All " : "") + std::to_string(busy_cores) +
                            (busy_cores == 1 ? " core is" : " cores are") +
                            " busy but hardware threads [" + unused.to_list_string() +
                            "] of them are never used (at most one thread per core: SMT unused)";
            } else {
                f.resources = load.reserved;
                f.message = std::to_string(load.peak_flows) + (load.peak_flows == 1 ? " thread" : " threads") +
                            " on " + std::to_string(busy_cores) + (busy_cores == 1 ? " core" : " cores") + " with " +
                            std::to_string(load.reserved.count()) +
                            " hardware threads: at most one hardware thread per core is busy (SMT unused)";
            }
            f.figures = {{"busy_cores", static_cast<std::int64_t>(busy_cores)},
                         {"threads", static_cast<std::int64_t>(load.peak_flows)},
                         {"unused_hardware_threads", static_cast<std::int64_t>(unused.count())}};
            out.push_back(std::move(f));
        }
        const Cpuset smt_shared = load.core_over_demanded - load.over_demanded - load.shared;
        if (!smt_shared.empty()) {
            Finding f;
            f.code = FindingCode::SmtSharedCores;
            f.severity = Severity::Info;
            f.check = "smt";
            f.node = std::string(node.host);
            f.resources = smt_shared;
            const std::size_t cores = node.cores_count(smt_shared);
            f.message = std::to_string(cores) + (cores == 1 ? " core runs" : " cores run") +
                        " more than one thread at once on its hardware threads (CPUs [" + smt_shared.to_list_string() +
                        "]): the threads share the core's execution units (SMT)";
            std::vector<std::uint32_t> flows;
            for (std::uint32_t i : load.active_flows)
                if (view.flows[i].placement.intersects(smt_shared)) flows.push_back(i);
            f.figures = {{"cores", static_cast<std::int64_t>(cores)}, {"threads", static_cast<std::int64_t>(flows.size())}};
            attach_flows(f, view, flows);
            out.push_back(std::move(f));
        }
    }
    return out;
}

}  // namespace stacksage
