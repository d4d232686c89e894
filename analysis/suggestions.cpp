#include "analysis/suggestions.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analysis/affinity_cause.hpp"
#include "analysis/binding_origin.hpp"

namespace stacksage {

namespace {

// What the suggestions of one node are computed from.
struct NodeFacts {
    const NodeView* node = nullptr;
    std::size_t cores = 0;           // available cores
    std::size_t processes = 0;       // application processes with busy flows
    std::size_t busy_threads = 0;    // most threads of one process computing at once (held, node_load.hpp)
    std::size_t narrowest = 0;       // fewest cores a process was placed on
    bool openmp = false;             // OpenMP created threads here (or OMP_NUM_THREADS is set)
    std::string omp_runtime;         // "GNU OpenMP", "LLVM OpenMP", ...; "" when none was seen
    std::string omp_num_threads;     // as set for the first process; "" when unset
    bool over_demanded = false;      // some CPU had more to run than it could
    BindingOrigin binding;           // of the first process that started narrowed
    std::vector<std::int64_t> bound_ranks;  // ranks (or pids) that started narrowed
    Cpuset process_cpus;             // the single process's placement
    double quota = 0;                // the cgroups' CPU quota where it limits the node (NodeView::cpu_quota)
};

NodeFacts facts_of(const RunView& view, const NodeLoad& load, const NodeView& node) {
    NodeFacts f;
    f.node = &node;
    f.cores = node.cores.size();
    if (node.cpu_quota > 0) {
        // A quota of q CPUs keeps at most floor(q) threads busy without throttling them.
        f.quota = node.cpu_quota;
        f.cores = std::min(f.cores, std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(f.quota + 1e-9))));
    }
    // Processes counted where they overlap in time: a launch agent's shell
    // and its `hostname`, gone before the ranks started, are no rank that
    // needs cores.
    f.processes = load.process_peak_flows.empty()
                      ? 0
                      : std::clamp<std::size_t>(load.peak_processes, 1, load.process_peak_flows.size());
    f.over_demanded = !load.over_demanded.empty();
    f.narrowest = f.cores;
    for (const auto& [p, peak] : load.process_peak_flows) {
        f.busy_threads = std::max(f.busy_threads, peak);
        f.narrowest = std::min(f.narrowest, std::max<std::size_t>(1, node.cores_count(view.processes[p].placement)));
    }
    for (std::uint32_t p : node.processes) {
        const ProcessView& process = view.processes[p];
        for (std::uint32_t i : process.flows) {
            const RuntimeName& r = view.runtime_of(view.flows[i]);
            if (r.family != RuntimeFamily::OpenMP) continue;
            f.openmp = true;
            if (f.omp_runtime.empty()) f.omp_runtime = r.name;
        }
        if (f.omp_num_threads.empty())
            if (auto v = process.env_value("OMP_NUM_THREADS")) f.omp_num_threads = std::string(*v);
        const BindingOrigin origin = binding_origin(view, process);
        if (origin.source == BindingSource::None) continue;
        if (f.binding.source == BindingSource::None) f.binding = origin;
        f.bound_ranks.push_back(process.rank >= 0 ? process.rank : process.pid);
    }
    // OMP_NUM_THREADS=1 creates no OpenMP thread, yet the program is an
    // OpenMP one: the variable is the knob to suggest.
    if (!f.omp_num_threads.empty()) f.openmp = true;
    // The one process: the one busy longest.
    if (f.processes == 1) {
        std::size_t longest = 0;
        for (std::size_t i = 1; i < load.process_busy_ns.size(); ++i)
            if (load.process_busy_ns[i] > load.process_busy_ns[longest]) longest = i;
        f.process_cpus = view.processes[load.process_peak_flows[longest].first].placement;
    }
    return f;
}

// "ranks", "processes": the plural of a unit.
std::string many(const std::string& unit) { return unit == "process" ? "processes" : unit + "s"; }

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
    return std::to_string(n) + " " + std::string(n == 1 ? one : many);
}

// How many processes per node, threads each and cores each fit the node.
struct Plan {
    std::size_t per_node = 1, threads = 1, cores = 1;
};

// The fitting configuration closest to what ran: keep the processes and
// threads when they fit (only their placement was wrong); else keep the
// processes and give each a share of the cores; else keep the threads per
// process and run fewer processes per node.
Plan fit(std::size_t cores, std::size_t processes, std::size_t threads) {
    cores = std::max<std::size_t>(1, cores);
    processes = std::max<std::size_t>(1, processes);
    threads = std::max<std::size_t>(1, threads);
    if (processes * threads <= cores) return {processes, threads, cores / processes};
    if (processes <= cores) return {processes, cores / processes, cores / processes};
    if (threads <= cores) return {cores / threads, threads, threads};
    return {1, cores, cores};
}

// The remedy of a plan, with the options of the launcher used.
Remedy remedy_of(const Plan& plan, const NodeFacts& f, const LauncherInfo& l) {
    Remedy r;
    r.processes_per_node = static_cast<std::int64_t>(plan.per_node);
    r.threads_per_process = static_cast<std::int64_t>(plan.threads);
    r.cores_per_process = static_cast<std::int64_t>(plan.cores);
    const std::string ppr = std::to_string(plan.per_node), pe = std::to_string(plan.cores);
    switch (l.kind) {
        case LauncherKind::OpenMPI:
            r.launcher = l.command;
            r.launcher_options = {"--map-by", "ppr:" + ppr + ":node" + (plan.cores > 1 ? ":PE=" + pe : ""),
                                  "--bind-to", "core"};
            break;
        case LauncherKind::Mpich:
            r.launcher = l.command;
            r.launcher_options = {"-ppn", ppr, "-bind-to", "core:" + pe};
            break;
        case LauncherKind::Slurm:
            r.launcher = "srun";
            r.launcher_options = {"--ntasks-per-node=" + ppr, "--cpus-per-task=" + pe, "--cpu-bind=cores"};
            break;
        default: break;
    }
    if (f.openmp) {
        r.env.emplace_back("OMP_NUM_THREADS", std::to_string(plan.threads));
        if (plan.threads > 1) {
            r.env.emplace_back("OMP_PROC_BIND", "close");
            r.env.emplace_back("OMP_PLACES", "cores");
        }
    }
    return r;
}

// The remedy as the user types it: "mpirun --map-by ... -x OMP_NUM_THREADS=2".
std::string command_of(const Remedy& r, const LauncherInfo& l) {
    std::string env_prefix, env_options;
    for (const auto& [name, value] : r.env) {
        env_prefix += name + "=" + value + " ";
        if (l.kind == LauncherKind::OpenMPI) env_options += " -x " + name + "=" + value;
        if (l.kind == LauncherKind::Mpich) env_options += " -genv " + name + " " + value;
    }
    if (r.launcher.empty()) {
        if (!env_prefix.empty()) env_prefix.pop_back();
        return env_prefix;
    }
    std::string s = l.kind == LauncherKind::Slurm ? env_prefix + r.launcher : r.launcher;
    for (const std::string& o : r.launcher_options) s += " " + o;
    return s + env_options;
}

std::string unbind_option(const LauncherInfo& l) {
    switch (l.kind) {
        case LauncherKind::OpenMPI: return "--bind-to none";
        case LauncherKind::Mpich: return "-bind-to none";
        case LauncherKind::Slurm: return "--cpu-bind=none";
        default: return {};
    }
}

std::string was_omp(const NodeFacts& f) {
    return f.omp_num_threads.empty() ? "OMP_NUM_THREADS was unset: one thread per CPU the process may use"
                                     : "OMP_NUM_THREADS was " + f.omp_num_threads;
}

// "rank 3", "ranks 0-7": ranks (or pids) in list form.
std::string who_list(const std::vector<std::int64_t>& ids, const std::string& unit) {
    Cpuset set;  // a set of small non-negative numbers, written as HPC people read them
    for (std::int64_t id : ids)
        if (id >= 0 && id < (1 << 20)) set.set(static_cast<unsigned>(id));
    return (ids.size() == 1 ? unit + " " : unit + "s ") + set.to_list_string();
}

std::string capitalised(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

// Why the node was over-subscribed, from the binding and the numbers.
std::string diagnosis(const NodeFacts& f, const LauncherInfo& l) {
    const std::string threads = plural(f.busy_threads, "thread", "threads");
    const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
    if (f.quota > 0 && static_cast<double>(f.processes * f.busy_threads) > f.quota + 1e-9)
        return (f.processes == 1 ? "The " + unit + " had " + threads
                                 : capitalised(plural(f.processes, unit, unit + "s")) + " had up to " + threads + " each") +
               " computing at once under a CPU quota of " + describe_cpu_quota(f.quota) +
               " (the cgroup grants that much CPU time per period, whatever its cpuset offers)";
    if (f.binding.source == BindingSource::Launcher && f.busy_threads > f.narrowest) {
        const bool one = f.bound_ranks.size() == 1;
        const std::string launcher = l.command.empty() ? f.binding.launcher : l.command;
        std::string s = capitalised(who_list(f.bound_ranks, unit)) + (one ? " was" : " were") + " bound by " +
                        launcher + " to " + (f.narrowest == 1 ? std::string("one core") : plural(f.narrowest, "core", "cores")) +
                        (one ? "" : " each");
        if (f.binding.launcher_default)
            s += l.kind == LauncherKind::OpenMPI
                     ? " by default (Open MPI binds each rank to a core when there are 2 ranks or fewer, to a "
                       "package or NUMA node above; no --bind-to was given, and no taskset or numactl is to blame)"
                     : " by default (no binding option was given)";
        else
            s += " (the binding options given)";
        return s + ": " + (one ? "its " + threads : "the " + threads + " of each") + " computing at once shared " +
               (f.narrowest == 1 ? "that core" : "those " + plural(f.narrowest, "core", "cores"));
    }
    if (f.binding.source == BindingSource::Inherited && f.processes == 1)
        return "The process was restricted to " + describe_cpus(*f.node, f.process_cpus) +
               " (by taskset, numactl or its parent, not by a launcher)";
    const std::string units = plural(f.processes, unit, many(unit));
    if (f.processes == 1)
        return "The " + unit + " had " + threads + " computing at once on the " + plural(f.cores, "core", "cores") +
               " of " + std::string(f.node->host);
    if (f.busy_threads > 1)
        return capitalised(units) + " with up to " + threads + " each computing at once needed " +
               std::to_string(f.processes * f.busy_threads) + " CPUs on the " + plural(f.cores, "core", "cores") +
               " of " + std::string(f.node->host);
    return capitalised(units) + " ran on the " + plural(f.cores, "core", "cores") + " of " + std::string(f.node->host);
}

// What to do, with the plan written as a command; fills the remedy.
std::string action(const NodeFacts& f, const LauncherInfo& l, const Plan& plan, Remedy& remedy) {
    remedy = remedy_of(plan, f, l);
    const std::string cmd = command_of(remedy, l);
    const bool placement_only = f.processes * f.busy_threads <= f.cores;
    std::string s;
    if (placement_only && f.binding.source == BindingSource::Inherited && l.kind == LauncherKind::None) {
        s = "Let it use all " + plural(f.cores, "core", "cores") + " (start it without taskset or numactl)";
        if (!cmd.empty()) s += " and run " + cmd;
        return s;
    }
    if (placement_only) {
        const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
        s = (f.processes == 1 ? "Give the " + unit + " " : "Give each " + unit + " ") + plural(plan.cores, "core", "cores") +
            (f.processes == 1 ? "" : " of its own");
        if (!cmd.empty()) s += ": " + cmd;
        if (f.binding.source == BindingSource::Launcher && !unbind_option(l).empty())
            s += " (or " + unbind_option(l) + ")";
        return s;
    }
    const std::string units = l.kind == LauncherKind::None ? "process" : "rank";
    if (f.openmp && f.processes == 1)
        s = "Run " + plural(plan.threads, "OpenMP thread", "OpenMP threads") + " (" + was_omp(f) + ")";
    else if (f.openmp)
        s = "Run " + plural(plan.per_node, units, many(units)) + " per node with " +
            plural(plan.threads, "OpenMP thread", "OpenMP threads") + " each (" + was_omp(f) + ")";
    else if (plan.per_node < f.processes)
        s = "Run " + plural(plan.per_node, units, many(units)) + " per node";
    else
        s = "Create at most " + plural(plan.threads, "thread", "threads") + " per process that compute at once (" +
            std::to_string(f.busy_threads) + " did)";
    if (!cmd.empty()) s += ": " + cmd;
    if (plan.per_node < f.processes && l.kind != LauncherKind::None) {
        const std::size_t nodes = (f.processes + plan.per_node - 1) / plan.per_node;
        s += ", on " + plural(nodes, "node", "nodes") + " for the " + std::to_string(f.processes) + " " + many(units);
    }
    // The other way round: more processes with fewer threads, or fewer with more.
    if (f.openmp && plan.threads > 1 && plan.per_node < f.processes && f.cores > plan.per_node) {
        Plan single{std::min(f.cores, f.processes), 1, 1};
        Remedy other = remedy_of(single, f, l);
        s += "; or " + plural(single.per_node, units, many(units)) + " per node with 1 thread each (" +
             command_of(other, l) + ")";
    } else if (plan.threads < f.busy_threads && f.busy_threads <= f.cores && l.kind != LauncherKind::None) {
        Plan fewer{f.cores / f.busy_threads, f.busy_threads, f.busy_threads};
        Remedy other = remedy_of(fewer, f, l);
        s += "; or keep " + plural(f.busy_threads, "thread", "threads") + " per " + units + " and run " +
             std::to_string(fewer.per_node) + " per node (" + command_of(other, l) + ")";
    }
    return s;
}

// OpenMP threads that find no CPU free keep spinning at barriers before
// they sleep: over-subscribed, they take the CPU from threads with work.
std::string spin_note(const NodeFacts& f) {
    if (!f.openmp || !f.over_demanded) return {};
    const std::string knob = f.omp_runtime == "GNU OpenMP" || f.omp_runtime.empty() ? "GOMP_SPINCOUNT=0"
                                                                                     : "KMP_BLOCKTIME=0";
    return ". Over-subscribed OpenMP threads spin-wait at barriers and take CPU time from threads that have "
           "work (it can make a run many times slower): where some over-subscription must stay, set "
           "OMP_WAIT_POLICY=passive (" +
           knob + ")";
}

// Over-demand that the program's own affinity calls made (affinity_cause.hpp):
// the calls are what to change, not the job's layout.
std::string suggest_affinity_calls(const RunView& view, const NodeLoad& load, const NodeView& node,
                                   const AffinityCauses& causes) {
    std::vector<std::uint32_t> threads;
    Cpuset room;  // every CPU these threads were allowed at some time
    for (const AffinityCause& c : causes.calls) {
        if (std::find(threads.begin(), threads.end(), c.flow) == threads.end()) threads.push_back(c.flow);
        for (const AffinityInterval& iv : view.flows[c.flow].intervals) room |= iv.cpuset;
    }
    room &= node.available;
    std::string s = "The over-subscription followed affinity calls of the program itself (" +
                    describe_affinity_calls(view, load, causes, 2) + ")";
    const std::size_t k = threads.size();
    if (k > 1 && room.count() >= k)
        return s + ". Change those calls to bind each of the " + std::to_string(k) +
               " threads to a CPU of its own (" + std::to_string(room.count()) + " CPUs, [" + room.to_list_string() +
               "], were open to them), or do not bind them";
    if (k > 1)
        return s + ". Only " + plural(room.count(), "CPU was", "CPUs were") + " open to these " + std::to_string(k) +
               " threads ([" + room.to_list_string() + "]): have fewer of them compute at once, or bind them to "
               "CPUs of their own on a larger reservation";
    return s + ". Change that call to bind the thread to a CPU no other busy thread uses, or do not bind it";
}

std::string suggest_overloaded(const NodeFacts& f, const LauncherInfo& l, Remedy& remedy) {
    const Plan plan = fit(f.cores, f.processes, f.busy_threads);
    return diagnosis(f, l) + ". " + action(f, l, plan, remedy) + spin_note(f);
}

std::string suggest_idle(const NodeFacts& f, const LauncherInfo& l, const Finding& finding, Remedy& remedy) {
    const std::size_t idle = static_cast<std::size_t>(std::max<std::int64_t>(0, finding.figure("idle_cores", 0)));
    const std::size_t processes = std::max<std::size_t>(1, f.processes);
    const std::size_t per = std::max<std::size_t>(1, f.cores / processes);
    const std::size_t threads = std::max<std::size_t>(1, f.busy_threads);
    std::string s;
    if (f.binding.source == BindingSource::Launcher && f.narrowest < per) {
        std::string d = diagnosis(f, l);
        s = d.substr(0, d.find(": the ")) + ". ";
    } else if (f.binding.source == BindingSource::Inherited && f.processes == 1) {
        s = "The process was restricted to " + describe_cpus(*f.node, f.process_cpus) +
            " (by taskset, numactl or its parent). ";
    }
    if (!f.openmp && l.kind == LauncherKind::None && threads >= per && f.binding.source == BindingSource::None)
        return "Use the " + plural(idle, "idle core", "idle cores") + ": start more processes or threads, or ask the "
               "batch system for " + plural(f.cores - std::min(f.cores, idle), "core", "cores") + " instead of " +
               std::to_string(f.cores);
    const Plan plan{processes, std::max(threads, per), per};
    remedy = remedy_of(plan, f, l);
    const std::string cmd = command_of(remedy, l);
    s += (processes == 1 ? "Give the process " : "Give each of the " + plural(processes, "process", "processes") + " ") +
         plural(per, "core", "cores") + " and as many threads";
    if (!cmd.empty()) s += ": " + cmd;
    if (f.binding.source == BindingSource::Inherited && l.kind == LauncherKind::None)
        s += " (start it without taskset or numactl)";
    const std::size_t more = f.cores / threads;
    if (more > processes && l.kind != LauncherKind::None) {
        Remedy other = remedy_of({more, threads, std::max<std::size_t>(1, f.cores / more)}, f, l);
        s += "; or start " + std::to_string(more) + " processes per node instead of " + std::to_string(processes) +
             " (" + command_of(other, l) + ")";
    }
    return s;
}

std::string suggest_underloaded_reservation(const NodeFacts& f, const LauncherInfo& l, const Finding& finding,
                                            Remedy& remedy) {
    const std::size_t cores = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("cores", 1)));
    const std::size_t threads = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("threads", 1)));
    const std::size_t processes = std::max<std::size_t>(1, f.processes);
    const std::size_t per = std::max<std::size_t>(1, cores / processes);
    if (f.openmp) {
        remedy = remedy_of({processes, per, per}, f, l);
        remedy.processes_per_node = -1;
        remedy.cores_per_process = -1;
        remedy.launcher.clear();
        remedy.launcher_options.clear();
        return "Use the reserved cores: " + command_of(remedy, LauncherInfo{}) + " (" + was_omp(f) + ")";
    }
    const std::size_t need = (threads + processes - 1) / processes;
    Remedy fewer = remedy_of({processes, need, need}, f, l);
    if (!fewer.launcher_options.empty()) {
        remedy = fewer;
        return "Reserve only " + plural(need, "core", "cores") + " per process: " + command_of(fewer, l) +
               ", or create " + std::to_string(per) + " threads per process";
    }
    return "Create " + std::to_string(per * processes) + " threads, or run the " +
           plural(processes, "process", "processes") + " on " + plural(threads, "core", "cores") + " (taskset -c)";
}

// A throttled quota: fewer threads, or a larger quota.
std::string suggest_quota(const NodeFacts& f, const LauncherInfo& l, const Finding& finding, Remedy& remedy) {
    const double quota = static_cast<double>(finding.figure("quota_cpus_x100", 100)) / 100.0;
    const std::size_t fits = std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(quota + 1e-9)));
    const std::size_t processes = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("processes", 1)));
    const std::size_t threads = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("threads", 1)));
    const std::size_t per_process = std::max<std::size_t>(1, fits / processes);
    const std::size_t wanted = std::max<std::size_t>(1, (threads + processes - 1) / processes);  // CPUs per process
    const std::string larger =
        "ask for a quota of " + plural(wanted * processes, "CPU", "CPUs") + " (" +
        (l.kind == LauncherKind::Slurm || l.kind == LauncherKind::None ? "srun --cpus-per-task=" + std::to_string(wanted) + ", "
                                                                       : std::string()) +
        "docker run --cpus=" + std::to_string(wanted * processes) + ", or the job's CPU limit)";
    if (threads <= per_process * processes)
        return "The " + plural(threads, "thread", "threads") + " computing at once fit the quota of " +
               describe_cpu_quota(quota) + " in number, yet were held back (other processes of the cgroup share "
               "the quota, or bursts of several threads exceed it): " + larger;
    remedy.threads_per_process = static_cast<std::int64_t>(per_process);
    std::string s = "Run no more threads than the quota has CPUs: ";
    if (f.openmp) {
        remedy.env.emplace_back("OMP_NUM_THREADS", std::to_string(per_process));
        s += "OMP_NUM_THREADS=" + std::to_string(per_process) + (processes > 1 ? " in each of the " + std::to_string(processes) + " processes" : "") +
             " (" + was_omp(f) + ")";
    } else {
        s += "at most " + plural(per_process, "thread", "threads") + " computing at once" +
             (processes > 1 ? " in each process" : "");
    }
    return s + "; or " + larger;
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
        if (facts_n.processes == 0) continue;
        if (f.code == FindingCode::OverloadedResources || f.code == FindingCode::OverloadedReservation) {
            const AffinityCauses causes = affinity_causes(view, loads[it->second]);
            if (causes.caused_by_calls())
                f.suggestion = suggest_affinity_calls(view, loads[it->second], view.nodes[it->second], causes);
            else
                f.suggestion = suggest_overloaded(facts_n, launcher, f.remedy);
        }
        else if (f.code == FindingCode::IdleResources)
            f.suggestion = suggest_idle(facts_n, launcher, f, f.remedy);
        else if (f.code == FindingCode::UnderloadedReservation)
            f.suggestion = suggest_underloaded_reservation(facts_n, launcher, f, f.remedy);
        else if (f.code == FindingCode::CpuQuotaThrottled)
            f.suggestion = suggest_quota(facts_n, launcher, f, f.remedy);
        else if (f.code == FindingCode::RuntimeContention)
            f.suggestion = "Keep the two runtimes off each other's cores, or run fewer threads. " +
                           suggest_overloaded(facts_n, launcher, f.remedy);
    }
}

}  // namespace stacksage
