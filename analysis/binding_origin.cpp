#include "analysis/binding_origin.hpp"

#include <array>

namespace stacksage {

bool asks_for_binding(std::string_view command_line) {
    static constexpr std::array<std::string_view, 10> kOptions = {
        "--bind-to", "-bind-to", "--map-by", "-map-by", "--cpu-set", "--cpu-bind", "--cpu_bind",
        "--rankfile", "-rf", "--cpus-per-rank"};
    for (std::string_view o : kOptions) {
        for (std::size_t at = command_line.find(o); at != std::string_view::npos;
             at = command_line.find(o, at + 1)) {
            const bool starts_word = at == 0 || command_line[at - 1] == ' ';
            const std::size_t end = at + o.size();
            const bool ends_word = end == command_line.size() || command_line[end] == ' ' || command_line[end] == '=';
            if (starts_word && ends_word) return true;
        }
    }
    return false;
}

namespace {

// The launcher on p's node that is p's parent; nullptr when its parent is
// not a launcher. Only launchers are searched (a handful per node), not
// every process of the run.
const ProcessView* launcher_parent_of(const RunView& view, const ProcessView& p) {
    if (p.ppid < 0) return nullptr;
    for (std::uint32_t l : view.nodes[p.node].launchers)
        if (view.processes[l].pid == p.ppid) return &view.processes[l];
    return nullptr;
}

bool some_launcher_asks_for_binding(const RunView& view) {
    for (const NodeView& node : view.nodes)
        for (std::uint32_t l : node.launchers)
            if (asks_for_binding(view.processes[l].cmdline)) return true;
    return false;
}

// The launcher's mask: its main thread's placement.
Cpuset mask_of(const RunView& view, const ProcessView& p) {
    return p.flows.empty() ? Cpuset{} : view.flows[p.flows.front()].placement;
}

bool environment_asks_for_binding(const ProcessView& p) {
    for (const auto& [name, value] : p.env)
        if (name.find("binding_policy") != std::string_view::npos || name == "OMPI_MCA_rmaps_base_mapping_policy" ||
            name.starts_with("SLURM_CPU_BIND") || name.starts_with("I_MPI_PIN"))
            return true;
    return false;
}

// Slurm's task/affinity bound the task: its environment names a binding
// type other than none (SLURM_CPU_BIND_TYPE=mask_cpu:, SLURM_CPU_BIND=
// quiet,mask_cpu:0x1, ...). Returns how, for the advice; "" when not.
std::string slurm_binding(const ProcessView& p) {
    const auto type = p.env_value("SLURM_CPU_BIND_TYPE");
    const auto bind = p.env_value("SLURM_CPU_BIND");
    auto names_a_binding = [](std::string_view v) {
        for (std::string_view word :
             {"mask_cpu", "map_cpu", "mask_ldom", "map_ldom", "cores", "threads", "sockets", "ldoms", "rank", "boards"})
            if (v.find(word) != std::string_view::npos) return true;
        return false;
    };
    const bool bound = (type && names_a_binding(*type)) || (!type && bind && names_a_binding(*bind));
    if (!bound) return {};
    std::string how = "Slurm's task/affinity binding: ";
    if (bind) how += "SLURM_CPU_BIND=" + std::string(*bind);
    else how += "SLURM_CPU_BIND_TYPE=" + std::string(*type);
    if (auto list = p.env_value("SLURM_CPU_BIND_LIST"); list && !bind)
        how += ", SLURM_CPU_BIND_LIST=" + std::string(*list);
    if (auto cpt = p.env_value("SLURM_CPUS_PER_TASK")) how += "; SLURM_CPUS_PER_TASK=" + std::string(*cpt);
    else how += "; SLURM_CPUS_PER_TASK unset: 1 CPU per task";
    return how + "; srun --cpus-per-task=N gives each task N CPUs, --cpu-bind=cores|none changes the binding";
}

}  // namespace

BindingOrigin binding_origin(const RunView& view, const ProcessView& p) {
    BindingOrigin origin;
    const NodeView& node = view.nodes[p.node];
    if (!p.program_start_cpuset) return origin;
    const Cpuset start = *p.program_start_cpuset & node.available;
    if (start.empty() || start == node.available) return origin;
    origin.cpus = start;
    const ProcessView* parent = launcher_parent_of(view, p);
    if (parent) {
        const Cpuset parent_mask = mask_of(view, *parent) & node.available;
        if (parent_mask != start && (parent_mask.empty() || (start - parent_mask).empty())) {
            origin.source = BindingSource::Launcher;
            origin.launcher = std::string(parent->launcher_name.empty() ? parent->name : parent->launcher_name);
            origin.launcher_default = !environment_asks_for_binding(p) && !some_launcher_asks_for_binding(view);
            return origin;
        }
    }
    if (std::string slurm = slurm_binding(p); !slurm.empty()) {
        origin.source = BindingSource::Launcher;
        origin.launcher = "srun";
        origin.launcher_detail = std::move(slurm);
        return origin;
    }
    origin.source = BindingSource::Inherited;
    return origin;
}

}  // namespace stacksage
