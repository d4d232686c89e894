#include "analysis/suggestions.hpp"

#include <algorithm>
#include <map>

namespace stacksage {

namespace {

// What the suggestions of one node are computed from.
struct NodeFacts {
    const NodeView* node = nullptr;
    std::size_t processes = 0;       // application processes with active flows
    std::size_t max_threads = 0;     // most active threads of one process
    std::size_t cores = 0;           // available cores
    std::size_t per_process = 1;     // cores each process would get in a fair split
    std::size_t widest_process = 0;  // cores of the widest process placement
    bool openmp = false;             // OpenMP created threads here
    bool restricted = false;         // one process, placed on fewer cores than available
    std::string omp_num_threads;     // as set for the first process; "" when unset
    Cpuset process_cpus;             // the single process's placement (restricted case)
};

NodeFacts facts_of(const RunView& view, const NodeLoad& load, const NodeView& node) {
    NodeFacts f;
    f.node = &node;
    f.cores = node.cores.size();
    std::map<std::uint32_t, std::size_t> threads_of;
    for (std::uint32_t i : load.active_flows) ++threads_of[view.flows[i].process];
    f.processes = threads_of.size();
    for (const auto& [p, n] : threads_of) {
        f.max_threads = std::max(f.max_threads, n);
        f.widest_process = std::max(f.widest_process, node.cores_count(view.processes[p].placement));
    }
    f.per_process = std::max<std::size_t>(1, f.processes ? f.cores / f.processes : f.cores);
    for (std::uint32_t p : node.processes) {
        for (std::uint32_t i : view.processes[p].flows)
            if (view.runtime_of(view.flows[i]).family == RuntimeFamily::OpenMP) f.openmp = true;
        if (f.omp_num_threads.empty())
            if (auto v = view.processes[p].env_value("OMP_NUM_THREADS")) f.omp_num_threads = std::string(*v);
    }
    // OMP_NUM_THREADS=1 creates no OpenMP thread, yet the program is an
    // OpenMP one: the variable is the knob to suggest.
    if (!f.omp_num_threads.empty()) f.openmp = true;
    if (f.processes == 1) {
        f.process_cpus = view.processes[threads_of.begin()->first].placement;
        f.restricted = node.cores_count(f.process_cpus) < f.cores;
    }
    return f;
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// The launcher options that place `processes` ranks per node with `cores`
// cores each, bound.
std::string placement_options(const LauncherInfo& l, std::size_t processes, std::size_t cores) {
    const std::string p = std::to_string(processes), c = std::to_string(cores);
    switch (l.kind) {
        case LauncherKind::OpenMPI:
            return l.command + " --map-by ppr:" + p + ":node:PE=" + c + " --bind-to core";
        case LauncherKind::Mpich:
            return l.command + " -ppn " + p + " -bind-to core:" + c;
        case LauncherKind::Slurm:
            return "srun --ntasks-per-node=" + p + " --cpus-per-task=" + c + " --cpu-bind=cores";
        default: return {};
    }
}

std::string omp_settings(std::size_t threads) {
    return "OMP_NUM_THREADS=" + std::to_string(threads) + " OMP_PROC_BIND=close OMP_PLACES=cores";
}

std::string was_omp(const NodeFacts& f) {
    return f.omp_num_threads.empty() ? " (OMP_NUM_THREADS was unset: one thread per CPU the process may use)"
                                     : " (it was " + f.omp_num_threads + ")";
}

std::string suggest_overloaded(const NodeFacts& f, const LauncherInfo& l) {
    if (f.processes > f.cores) {
        const std::string c = std::to_string(f.cores);
        switch (l.kind) {
            case LauncherKind::OpenMPI:
                return "Run at most " + c + " processes per node (" + std::to_string(f.processes) +
                       " ran on " + std::string(f.node->host) + "): " + l.command + " --map-by ppr:" + c +
                       ":node --bind-to core, with more nodes for the other ranks";
            case LauncherKind::Mpich:
                return "Run at most " + c + " processes per node: " + l.command + " -ppn " + c + " -bind-to core";
            case LauncherKind::Slurm:
                return "Run at most " + c + " tasks per node: srun --ntasks-per-node=" + c + " --cpu-bind=cores";
            default:
                return "Start at most " + c + " processes on " + std::string(f.node->host) + " (" +
                       std::to_string(f.processes) + " ran)";
        }
    }
    const std::size_t per = f.per_process;
    std::string s;
    if (f.processes <= 1) {
        const std::size_t cores = f.restricted ? f.cores : std::max<std::size_t>(1, f.widest_process);
        if (f.openmp)
            s = "Run at most " + plural(cores, "thread", "threads") + ": " + omp_settings(cores) + was_omp(f);
        else
            s = "Create at most " + plural(cores, "thread", "threads") + " (" + std::to_string(f.max_threads) +
                " were created)";
        if (f.restricted)
            s += "; the process was restricted to " + describe_cpus(*f.node, f.process_cpus) +
                 " (by taskset, numactl or its parent): let it use all " + plural(f.cores, "core", "cores");
        return s;
    }
    if (f.max_threads > per) {
        s = f.openmp ? "Set OMP_NUM_THREADS=" + std::to_string(per) + was_omp(f) + " so that the " +
                           std::to_string(f.processes) + " processes fit the " + plural(f.cores, "core", "cores")
                     : "Create at most " + plural(per, "thread", "threads") + " per process (" +
                           std::to_string(f.max_threads) + " were created) so that the " +
                           std::to_string(f.processes) + " processes fit the " + plural(f.cores, "core", "cores");
    } else {
        s = "Bind each process to cores of its own";
    }
    const std::string opts = placement_options(l, f.processes, per);
    if (!opts.empty())
        s += "; give each process " + plural(per, "core", "cores") + ": " + opts;
    else
        s += "; give each process " + plural(per, "core", "cores") + " of its own (taskset or sched_setaffinity)";
    if (f.openmp) s += ", with OMP_PROC_BIND=close OMP_PLACES=cores";
    // The other way round: keep the threads, run fewer processes per node.
    if (f.max_threads > per && f.max_threads <= f.cores) {
        const std::size_t fewer = f.cores / f.max_threads;
        const std::string alt = placement_options(l, fewer, f.max_threads);
        s += "; or keep " + plural(f.max_threads, "thread", "threads") + " per process and run " +
             std::to_string(fewer) + " per node" + (alt.empty() ? "" : " (" + alt + ")");
    }
    return s;
}

std::string suggest_idle(const NodeFacts& f, const LauncherInfo& l, const Finding& finding) {
    const std::size_t idle = static_cast<std::size_t>(std::max<std::int64_t>(0, finding.figure("idle_cores", 0)));
    if (f.processes <= 1 && l.kind == LauncherKind::None) {
        std::string s;
        if (f.restricted)
            s = "The process was restricted to " + describe_cpus(*f.node, f.process_cpus) +
                " (by taskset, numactl or its parent): let it use all " + plural(f.cores, "core", "cores");
        else
            s = "Let the process use the idle cores";
        s += f.openmp ? " and run " + omp_settings(f.cores) : " and run " + plural(f.cores, "thread", "threads");
        return s;
    }
    const std::size_t processes = std::max<std::size_t>(1, f.processes);
    const std::size_t per = f.per_process;
    std::string s;
    if (per * processes > f.cores - std::min(f.cores, idle)) {
        s = "Give each of the " + plural(processes, "process", "processes") + " " + plural(per, "core", "cores") +
            " and as many threads";
        const std::string opts = placement_options(l, processes, per);
        if (!opts.empty()) s += ": " + opts;
        if (f.openmp) s += " with OMP_NUM_THREADS=" + std::to_string(per) + " OMP_PROC_BIND=close OMP_PLACES=cores";
        const std::size_t threads = std::max<std::size_t>(1, f.max_threads);
        const std::size_t more = f.cores / threads;
        if (more > processes) {
            s += "; or start " + std::to_string(more) + " processes per node instead of " + std::to_string(processes);
            if (l.kind == LauncherKind::OpenMPI) s += " (" + l.command + " --map-by ppr:" + std::to_string(more) + ":node)";
            if (l.kind == LauncherKind::Slurm) s += " (srun --ntasks-per-node=" + std::to_string(more) + ")";
            if (l.kind == LauncherKind::Mpich) s += " (" + l.command + " -ppn " + std::to_string(more) + ")";
        }
        return s;
    }
    return "Use the " + plural(idle, "idle core", "idle cores") + ": start more processes or threads, or ask the "
           "batch system for " + plural(f.cores - std::min(f.cores, idle), "core", "cores") + " instead of " +
           std::to_string(f.cores);
}

std::string suggest_underloaded_reservation(const NodeFacts& f, const LauncherInfo& l, const Finding& finding) {
    const std::size_t cores = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("cores", 1)));
    const std::size_t threads = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("threads", 1)));
    const std::size_t processes = std::max<std::size_t>(1, f.processes);
    const std::size_t per = std::max<std::size_t>(1, cores / processes);
    if (f.openmp)
        return "Use the reserved cores: OMP_NUM_THREADS=" + std::to_string(per) + was_omp(f) +
               " with OMP_PROC_BIND=close OMP_PLACES=cores";
    const std::size_t need = (threads + processes - 1) / processes;
    const std::string opts = placement_options(l, processes, need);
    if (!opts.empty())
        return "Reserve only " + plural(need, "core", "cores") + " per process: " + opts +
               ", or create " + std::to_string(per) + " threads per process";
    return "Create " + std::to_string(per * processes) + " threads, or run the " +
           plural(processes, "process", "processes") + " on " + plural(threads, "core", "cores") +
           " (taskset -c)";
}

}  // namespace

void add_suggestions(const RunView& view, const std::vector<NodeLoad>& loads, const LauncherInfo& launcher,
                     std::vector<Finding>& findings) {
    std::map<std::string, std::uint32_t> node_index;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) node_index.emplace(std::string(view.nodes[n].host), n);
    std::map<std::uint32_t, NodeFacts> facts;
    auto facts_for = [&](std::uint32_t n) -> const NodeFacts& {
        auto it = facts.find(n);
        if (it == facts.end()) it = facts.emplace(n, facts_of(view, loads[n], view.nodes[n])).first;
        return it->second;
    };
    for (Finding& f : findings) {
        if (f.severity == Severity::Info) continue;
        auto it = node_index.find(f.node);
        if (it == node_index.end()) continue;
        const NodeFacts& facts_n = facts_for(it->second);
        if (f.code == "overloaded-resources" || f.code == "overloaded-reservation")
            f.suggestion = suggest_overloaded(facts_n, launcher);
        else if (f.code == "idle-resources")
            f.suggestion = suggest_idle(facts_n, launcher, f);
        else if (f.code == "underloaded-reservation")
            f.suggestion = suggest_underloaded_reservation(facts_n, launcher, f);
        else if (f.code == "runtime-contention")
            f.suggestion = "Keep the two runtimes off each other's cores, or run fewer threads. " +
                           suggest_overloaded(facts_n, launcher);
    }
}

}  // namespace stacksage
