#include "analysis/affinity_cause.hpp"

#include <algorithm>

namespace stacksage {

namespace {

std::string_view base_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string cpus_text(const Cpuset& cpus) {
    return (cpus.count() == 1 ? "CPU " : "CPUs ") + cpus.to_list_string();
}

}  // namespace

AffinityCauses affinity_causes(const RunView& view, const NodeLoad& load) {
    AffinityCauses out;
    for (const OverDemandShare& share : load.over_demand_shares) {
        out.over_demand_busy_ns = add_saturating(out.over_demand_busy_ns, share.ns);
        const FlowView& flow = view.flows[share.flow];
        if (share.interval >= flow.intervals.size()) continue;
        const AffinityInterval& iv = flow.intervals[share.interval];
        if (!iv.set_by_affinity_call()) continue;
        // Set before the program started: its launcher or parent bound it
        // between fork and exec (binding_origin.hpp), no call of the program.
        if (iv.start_ns < view.processes[flow.process].program_start_ns) continue;
        // A call that widened the mask (to every CPU of the node, or to more
        // than the flow had: hwloc unbinding a thread at MPI_Init) opened
        // CPUs; it did not crowd the flow onto them.
        const Cpuset& available = view.nodes[view.processes[flow.process].node].available;
        if (!available.empty() && (available & iv.cpuset) == available) continue;
        if (share.interval > 0 && flow.intervals[share.interval - 1].cpuset.is_subset_of(iv.cpuset)) continue;
        out.by_calls_ns = add_saturating(out.by_calls_ns, share.ns);
        out.calls.push_back({share.flow, share.interval, share.ns});
    }
    return out;
}

std::string describe_affinity_call(const RunView& view, const NodeLoad& load, const AffinityCause& cause) {
    const FlowView& flow = view.flows[cause.flow];
    const AffinityInterval& iv = flow.intervals[cause.interval];
    const ProcessView& process = view.processes[flow.process];
    const std::string who = process.rank >= 0 ? "rank " + std::to_string(process.rank)
                                              : "pid " + std::to_string(process.pid);
    std::string s;
    if (iv.caller_tid < 0 || iv.caller_tid == flow.tid)
        s = "thread " + std::to_string(flow.tid) + " (" + who + ") bound itself to " + cpus_text(iv.cpuset);
    else
        s = "thread " + std::to_string(iv.caller_tid) + " (" + who + ") bound thread " + std::to_string(flow.tid) +
            " to " + cpus_text(iv.cpuset);
    if (!iv.api.empty()) s += " with " + std::string(iv.api);
    s += " at " + seconds_text(std::max<std::int64_t>(0, subtract_saturating(iv.start_ns, load.run_start_ns)));
    if (!iv.caller_module.empty()) s += ", called from " + std::string(base_name(iv.caller_module));
    if (cause.interval > 0) s += " (it had " + cpus_text(flow.intervals[cause.interval - 1].cpuset) + ")";
    return s;
}

std::string describe_affinity_calls(const RunView& view, const NodeLoad& load, const AffinityCauses& causes,
                                    std::size_t most) {
    std::string s;
    const std::size_t shown = std::min(most, causes.calls.size());
    for (std::size_t i = 0; i < shown; ++i) s += (i ? "; " : "") + describe_affinity_call(view, load, causes.calls[i]);
    if (causes.calls.size() > shown) s += "; and " + std::to_string(causes.calls.size() - shown) + " more";
    return s;
}

}  // namespace stacksage
