#include "analysis/pu_usage.hpp"

#include "core/run_model_schema.hpp"

namespace stacksage {

PuUsage compute_pu_usage(const RunView& view, std::uint32_t node) {
    PuUsage usage;
    const Model* model = view.model;
    const auto cpu_time_key = model ? model->find_key(memory_access_keys::cpu_time_ns) : std::nullopt;
    for (std::uint32_t p : view.nodes[node].processes)
        for (std::uint32_t fi : view.processes[p].flows) {
            const FlowView& f = view.flows[fi];
            const unsigned k = f.placement.count();
            for (unsigned cpu : f.placement) {
                CpuUsage& u = usage.by_cpu[cpu];
                ++(f.service ? u.service_flows : u.active_flows);
                if (f.cpu_time_us > 0 && k > 0) u.estimated_ms += f.cpu_time_us / 1000.0 / k;
            }
            if (cpu_time_key)
                for (DataPathId dp : model->datapaths(f.id, DataPathType::RanOn, Direction::Out)) {
                    const auto ns = model->get_int(dp, *cpu_time_key);
                    if (ns) usage.measured_ms[index_of(model->target(dp))] += *ns / 1e6;
                }
        }
    return usage;
}

}  // namespace stacksage
