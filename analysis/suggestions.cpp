#include "analysis/suggestions.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>

#include "analysis/affinity_cause.hpp"
#include "analysis/binding_origin.hpp"
#include "core/plural.hpp"

namespace stacksage {

namespace {

// A runtime on the node whose thread count is a setting: OpenMP, a BLAS
// library's thread pool (OpenBLAS, BLIS, MKL), TBB.
struct ThreadPool {
    std::string runtime;  // "GNU OpenMP", "OpenBLAS", "TBB"
    RuntimeFamily family = RuntimeFamily::Unknown;
    ThreadCountSetting setting;  // its variable, or what works in the program
    std::string value;           // the variable as recorded for the first process; "" when unset
};

// What the suggestions of one node are computed from.
struct NodeFacts {
    const NodeView* node = nullptr;
    std::size_t cores = 0;           // available cores
    // Application processes with busy flows; while CPUs were over-demanded,
    // only those busy then (node_load.hpp: a pool's parent that only waited
    // for its workers makes no demand).
    std::size_t processes = 0;
    std::size_t busy_threads = 0;    // most threads of one such process computing at once (held, node_load.hpp)
    std::size_t narrowest = 0;       // fewest cores such a process was placed on
    bool openmp = false;             // OpenMP created threads here (or OMP_NUM_THREADS is set)
    std::string omp_runtime;         // "GNU OpenMP", "LLVM OpenMP", ...; "" when none was seen
    std::string omp_num_threads;     // as set for the first process; "" when unset
    // Runtimes whose thread count is a setting, OpenMP first, then the math
    // libraries, then TBB, in the order first seen.
    std::vector<ThreadPool> pools;
    // Math libraries' thread-count variables the recorded environment sets
    // for a library that created no thread of its own (its OpenMP build:
    // libgomp creates them), where they override OMP_NUM_THREADS.
    std::vector<std::pair<std::string, std::string>> library_variables;
    // The recorded environment already makes OpenMP threads sleep at
    // barriers: "OMP_WAIT_POLICY=passive", "GOMP_SPINCOUNT=0", ...; "" when not.
    std::string passive_wait;
    bool over_demanded = false;      // some CPU had more to run than it could
    BindingOrigin binding;           // of the first process that started narrowed
    std::vector<std::int64_t> bound_ranks;  // ranks (or pids) that started narrowed
    Cpuset process_cpus;             // the single process's placement
    double quota = 0;                // the cgroups' CPU quota where it limits the node (NodeView::cpu_quota)
};

bool equals_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

// The setting that already makes the node's OpenMP threads sleep rather
// than spin, as recorded: OMP_WAIT_POLICY=passive (which also sets GNU
// OpenMP's spin count to 0), GOMP_SPINCOUNT=0 for GNU OpenMP,
// KMP_BLOCKTIME=0 for LLVM and Intel OpenMP.
std::string passive_wait_of(const ProcessView& p, std::string_view omp_runtime) {
    if (auto v = p.env_value("OMP_WAIT_POLICY"); v && equals_ignoring_case(*v, "passive"))
        return "OMP_WAIT_POLICY=" + std::string(*v);
    const bool gnu = omp_runtime.empty() || omp_runtime == "GNU OpenMP";
    if (auto v = p.env_value(gnu ? "GOMP_SPINCOUNT" : "KMP_BLOCKTIME"); v && *v == "0")
        return std::string(gnu ? "GOMP_SPINCOUNT" : "KMP_BLOCKTIME") + "=0";
    return {};
}

int pool_rank(RuntimeFamily family) {
    return family == RuntimeFamily::OpenMP ? 0 : family == RuntimeFamily::MathLibrary ? 1 : 2;
}

NodeFacts facts_of(const RunView& view, const NodeLoad& load, const NodeView& node) {
    NodeFacts f;
    f.node = &node;
    f.cores = node.cores.size();
    if (node.cpu_quota > 0) {
        // A quota of q CPUs keeps at most floor(q) threads busy without throttling them.
        f.quota = node.cpu_quota;
        f.cores = std::min(f.cores, std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(f.quota + 1e-9))));
    }
    f.over_demanded = !load.over_demanded.empty();
    std::vector<std::pair<std::uint32_t, std::size_t>> demand;
    for (const auto& entry : load.process_peak_flows)
        if (load.over_demand_processes.empty() ||
            std::find(load.over_demand_processes.begin(), load.over_demand_processes.end(), entry.first) !=
                load.over_demand_processes.end())
            demand.push_back(entry);
    // Processes counted where they overlap in time (a launch agent's shell
    // and its `hostname`, gone before the ranks started, are no rank that
    // needs cores), and, under over-demand, only those that made it.
    f.processes = !load.over_demand_processes.empty() ? demand.size()
                  : load.process_peak_flows.empty()
                      ? 0
                      : std::clamp<std::size_t>(load.peak_processes, 1, load.process_peak_flows.size());
    f.narrowest = f.cores;
    for (const auto& [p, peak] : demand) {
        f.busy_threads = std::max(f.busy_threads, peak);
        f.narrowest = std::min(f.narrowest, std::max<std::size_t>(1, node.cores_count(view.processes[p].placement)));
    }
    for (std::uint32_t p : node.processes) {
        const ProcessView& process = view.processes[p];
        for (std::uint32_t i : process.flows) {
            const FlowView& flow = view.flows[i];
            if (flow.kind == FlowKind::Main) continue;
            const RuntimeName& r = view.runtime_of(flow);
            if (r.family == RuntimeFamily::OpenMP) {
                f.openmp = true;
                if (f.omp_runtime.empty()) f.omp_runtime = r.name;
            }
            const ThreadCountSetting setting = thread_count_setting(r);
            if (setting.variable.empty() && setting.in_the_program.empty()) continue;
            if (std::any_of(f.pools.begin(), f.pools.end(), [&](const ThreadPool& t) { return t.runtime == r.name; }))
                continue;
            ThreadPool pool{r.name, r.family, setting, {}};
            if (!setting.variable.empty())
                if (auto v = process.env_value(setting.variable)) pool.value = std::string(*v);
            f.pools.push_back(std::move(pool));
        }
        if (f.omp_num_threads.empty())
            if (auto v = process.env_value("OMP_NUM_THREADS")) f.omp_num_threads = std::string(*v);
        for (std::string_view variable : kMathLibraryThreadVariables) {
            const auto v = process.env_value(variable);
            if (!v) continue;
            const bool known = std::any_of(f.library_variables.begin(), f.library_variables.end(),
                                           [&](const auto& kv) { return kv.first == variable; });
            if (!known) f.library_variables.emplace_back(std::string(variable), std::string(*v));
        }
        const BindingOrigin origin = binding_origin(view, process);
        if (origin.source == BindingSource::None) continue;
        if (f.binding.source == BindingSource::None) f.binding = origin;
        f.bound_ranks.push_back(process.rank >= 0 ? process.rank : process.pid);
    }
    // OMP_NUM_THREADS=1 creates no OpenMP thread, yet the program is an
    // OpenMP one: the variable is the knob to suggest.
    if (!f.omp_num_threads.empty()) f.openmp = true;
    if (f.openmp && std::none_of(f.pools.begin(), f.pools.end(),
                                 [](const ThreadPool& t) { return t.family == RuntimeFamily::OpenMP; }))
        f.pools.push_back({f.omp_runtime.empty() ? "OpenMP" : f.omp_runtime, RuntimeFamily::OpenMP,
                           thread_count_setting({"OpenMP", RuntimeFamily::OpenMP}), f.omp_num_threads});
    for (ThreadPool& t : f.pools)
        if (t.family == RuntimeFamily::OpenMP) t.value = f.omp_num_threads;
    std::stable_sort(f.pools.begin(), f.pools.end(), [](const ThreadPool& a, const ThreadPool& b) {
        return pool_rank(a.family) < pool_rank(b.family);
    });
    // A variable of a library that is a pool here is that pool's setting.
    std::erase_if(f.library_variables, [&](const auto& kv) {
        return std::any_of(f.pools.begin(), f.pools.end(),
                           [&](const ThreadPool& t) { return t.setting.variable == kv.first; });
    });
    if (f.openmp)
        for (std::uint32_t p : node.processes) {
            f.passive_wait = passive_wait_of(view.processes[p], f.omp_runtime);
            if (f.passive_wait.empty()) break;  // applied only where every process has it
        }
    // The one process: the one that made the demand, else the one busy longest.
    if (f.processes == 1 && !load.over_demand_processes.empty()) {
        f.process_cpus = view.processes[demand.front().first].placement;
    } else if (f.processes == 1) {
        std::size_t longest = 0;
        for (std::size_t i = 1; i < load.process_busy_ns.size(); ++i)
            if (load.process_busy_ns[i] > load.process_busy_ns[longest]) longest = i;
        f.process_cpus = view.processes[load.process_peak_flows[longest].first].placement;
    }
    return f;
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
    const std::string threads = std::to_string(plan.threads);
    if (f.openmp) {
        r.env.emplace_back("OMP_NUM_THREADS", threads);
        if (plan.threads > 1) {
            r.env.emplace_back("OMP_PROC_BIND", "close");
            r.env.emplace_back("OMP_PLACES", "cores");
        }
    }
    // Each pool's own variable (TBB has none: the sentence says what to do
    // in the program), and the math libraries' variables the run set, which
    // their OpenMP builds read before OMP_NUM_THREADS.
    for (const ThreadPool& t : f.pools)
        if (t.family != RuntimeFamily::OpenMP && !t.setting.variable.empty())
            r.env.emplace_back(std::string(t.setting.variable), threads);
    for (const auto& [name, value] : f.library_variables) r.env.emplace_back(name, threads);
    return r;
}

// The thread pool the advice is about: OpenMP, else a math library, else
// TBB; nullptr when the threads are the program's own.
const ThreadPool* main_pool(const NodeFacts& f) { return f.pools.empty() ? nullptr : &f.pools.front(); }

// "OpenMP thread", "OpenBLAS thread", "thread".
std::string thread_noun(const NodeFacts& f) {
    const ThreadPool* t = main_pool(f);
    if (t == nullptr) return "thread";
    return (t->family == RuntimeFamily::OpenMP ? std::string("OpenMP") : t->runtime) + " thread";
}

// What the pool's setting was: "OMP_NUM_THREADS was unset: one thread per
// CPU the process may use", "OPENBLAS_NUM_THREADS was 2"; for TBB, what to
// do in the program with n threads.
std::string setting_was(const NodeFacts& f, std::size_t n) {
    const ThreadPool* t = main_pool(f);
    if (t == nullptr) return {};
    if (t->setting.variable.empty()) {
        std::string how(t->setting.in_the_program);
        // "N)" is where the count goes: "max_allowed_parallelism, N)", "task_arena(N)".
        for (std::size_t at = how.find("N)"); at != std::string::npos; at = how.find("N)", at))
            how.replace(at, 1, std::to_string(n));
        return how;
    }
    std::string s = std::string(t->setting.variable) +
                    (t->value.empty() ? " was unset: " + std::string(t->setting.default_count) : " was " + t->value);
    for (const auto& [name, value] : f.library_variables) s += ", " + name + " was " + value;
    return s;
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

// "rank 3", "ranks 0-7": ranks (or pids) in list form.
std::string who_list(const std::vector<std::int64_t>& ids, const std::string& unit) {
    Cpuset set;  // a set of small non-negative numbers, written as HPC people read them
    for (std::int64_t id : ids)
        if (id >= 0 && id < (1 << 20)) set.set(static_cast<unsigned>(id));
    return (ids.size() == 1 ? unit : plural_of(unit)) + " " + set.to_list_string();
}

std::string capitalised(std::string s) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    return s;
}

// How the launcher came to bind: its default policy, the options given, or
// what Slurm's task/affinity plugin put in the task's environment.
std::string binding_how(const NodeFacts& f, const LauncherInfo& l) {
    if (!f.binding.launcher_detail.empty()) return " (" + f.binding.launcher_detail + ")";
    if (f.binding.launcher_default)
        return l.kind == LauncherKind::OpenMPI
                   ? " by default (Open MPI binds each rank to a core when there are 2 ranks or fewer, to a "
                     "package or NUMA node above; no --bind-to was given, and no taskset or numactl is to blame)"
                   : " by default (no binding option was given)";
    return " (the binding options given)";
}

// Why the node was over-subscribed, from the binding and the numbers.
std::string diagnosis(const NodeFacts& f, const LauncherInfo& l) {
    const std::string threads = counted(f.busy_threads, "thread");
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
                        launcher + " to " +
                        (f.narrowest == 1 ? std::string("one core") : counted(f.narrowest, "core")) +
                        (one ? "" : " each") + binding_how(f, l);
        return s + ": " + (one ? "its " + threads : "the " + threads + " of each") + " computing at once shared " +
               (f.narrowest == 1 ? "that core" : "those " + counted(f.narrowest, "core"));
    }
    if (f.binding.source == BindingSource::Inherited && f.processes == 1)
        return "The process was restricted to " + describe_cpus(*f.node, f.process_cpus) +
               " (by taskset, numactl or its parent, not by a launcher)";
    const std::string units = counted(f.processes, unit);
    if (f.processes == 1)
        return "The " + unit + " had " + threads + " computing at once on the " + counted(f.cores, "core") + " of " +
               std::string(f.node->host);
    if (f.busy_threads > 1)
        return capitalised(units) + " with up to " + threads + " each computing at once needed " +
               std::to_string(f.processes * f.busy_threads) + " CPUs on the " + counted(f.cores, "core") + " of " +
               std::string(f.node->host);
    return capitalised(units) + " ran on the " + counted(f.cores, "core") + " of " + std::string(f.node->host);
}

// "Run 2 ranks per node with 1 OpenMP thread each (OMP_NUM_THREADS was 2)".
std::string run_plan_text(const NodeFacts& f, const LauncherInfo& l, const Plan& plan) {
    const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
    const std::string noun = thread_noun(f);
    const std::string was = main_pool(f) ? " (" + setting_was(f, plan.threads) + ")" : "";
    if (main_pool(f) && f.processes == 1 && plan.per_node == 1) return "Run " + counted(plan.threads, noun) + was;
    if (main_pool(f) && l.kind == LauncherKind::None && plan.per_node == f.processes)
        return "Run " + counted(plan.threads, noun) + " in each of the " + counted(f.processes, unit) + was;
    if (main_pool(f) && l.kind == LauncherKind::None)
        return "Run " + counted(plan.per_node, unit) + " (not " + std::to_string(f.processes) + ") with " +
               counted(plan.threads, noun) + " each" + was;
    if (main_pool(f))
        return "Run " + counted(plan.per_node, unit) + " per node with " + counted(plan.threads, noun) + " each" + was;
    if (plan.per_node < f.processes) return "Run " + counted(plan.per_node, unit) + " per node";
    return "Create at most " + counted(plan.threads, "thread") + " per process that compute at once (" +
           std::to_string(f.busy_threads) + " did)";
}

// ", on 4 nodes for the 8 ranks" where a plan runs fewer ranks per node.
std::string nodes_note(const NodeFacts& f, const LauncherInfo& l, const Plan& plan) {
    if (plan.per_node >= f.processes || l.kind == LauncherKind::None) return {};
    const std::size_t nodes = (f.processes + plan.per_node - 1) / plan.per_node;
    return ", on " + counted(nodes, "node") + " for the " + counted(f.processes, "rank");
}

// What to do, with the plan written as a command; fills the remedy. Where
// two configurations fit, the one with more processes and fewer threads
// each comes first: it is expected to be faster (measured: 2 ranks x 1
// thread bound to cores beat 1 rank x 2 threads on a 2-rank MPI+OpenMP
// solver), and the remedy is the first.
std::string action(const NodeFacts& f, const LauncherInfo& l, Remedy& remedy) {
    const Plan fitted = fit(f.cores, f.processes, f.busy_threads);
    const bool placement_only = f.processes * f.busy_threads <= f.cores;
    if (placement_only) {
        remedy = remedy_of(fitted, f, l);
        const std::string cmd = command_of(remedy, l);
        std::string s;
        if (f.binding.source == BindingSource::Inherited && l.kind == LauncherKind::None) {
            s = "Let it use all " + counted(f.cores, "core") + " (start it without taskset or numactl)";
            if (!cmd.empty()) s += " and run " + cmd;
            return s;
        }
        const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
        s = (f.processes == 1 ? "Give the " + unit + " " : "Give each " + unit + " ") + counted(fitted.cores, "core") +
            (f.processes == 1 ? "" : " of its own");
        if (!cmd.empty()) s += ": " + cmd;
        if (f.binding.source == BindingSource::Launcher && !unbind_option(l).empty())
            s += " (or " + unbind_option(l) + ")";
        return s;
    }
    Plan plan = fitted;
    std::optional<Plan> other;
    if (main_pool(f) && f.processes > f.cores && f.busy_threads > 1) {
        // More processes than cores: as many processes of 1 thread as cores
        // first, then fewer processes that keep their threads.
        plan = {f.cores, 1, 1};
        // Without a launcher the remedy cannot say how many processes to
        // start: the other configuration would only repeat the threads
        // that ran.
        if (l.kind != LauncherKind::None) other = fitted;
    } else if (fitted.threads < f.busy_threads && f.busy_threads <= f.cores && l.kind != LauncherKind::None) {
        other = Plan{f.cores / f.busy_threads, f.busy_threads, f.busy_threads};
    }
    remedy = remedy_of(plan, f, l);
    const std::string cmd = command_of(remedy, l);
    std::string s = run_plan_text(f, l, plan);
    if (!cmd.empty()) s += ": " + cmd;
    s += nodes_note(f, l, plan);
    if (other) {
        const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
        const Remedy o = remedy_of(*other, f, l);
        s += "; or " + counted(other->per_node, unit) + " per node with " +
             counted(other->threads, other->threads == 1 ? std::string("thread") : thread_noun(f)) + " each (" +
             command_of(o, l) + ")" + nodes_note(f, l, *other);
    }
    return s;
}

// OpenMP threads that find no CPU free keep spinning at barriers before
// they sleep: over-subscribed, they take the CPU from threads with work.
// Not said where the recorded environment already makes them sleep.
std::string spin_note(const NodeFacts& f) {
    if (!f.openmp || !f.over_demanded || !f.passive_wait.empty()) return {};
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
    return diagnosis(f, l) + ". " + action(f, l, remedy) + spin_note(f);
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
    if (!main_pool(f) && l.kind == LauncherKind::None && threads >= per && f.binding.source == BindingSource::None)
        return "Use the " + counted(idle, "idle core") +
               ": start more processes or threads, or ask the "
               "batch system for " +
               counted(f.cores - std::min(f.cores, idle), "core") + " instead of " + std::to_string(f.cores);
    const Plan wider{processes, std::max(threads, per), per};
    const Remedy wider_remedy = remedy_of(wider, f, l);
    const std::string unit = l.kind == LauncherKind::None ? "process" : "rank";
    std::string give =
        (processes == 1 ? "give the " + unit + " " : "give each of the " + counted(processes, unit) + " ") +
        counted(per, "core") + " and as many threads";
    const std::string wider_cmd = command_of(wider_remedy, l);
    const std::size_t more = f.cores / threads;
    if (more > processes && l.kind != LauncherKind::None) {
        // More processes of the threads they had first (see action()).
        const Plan more_processes{more, threads, std::max<std::size_t>(1, f.cores / more)};
        remedy = remedy_of(more_processes, f, l);
        s += "Start " + std::to_string(more) + " processes per node instead of " + std::to_string(processes) + " (" +
             command_of(remedy, l) + "); or " + give;
        if (!wider_cmd.empty()) s += " (" + wider_cmd + ")";
        return s;
    }
    remedy = wider_remedy;
    s += capitalised(give);
    if (!wider_cmd.empty()) s += ": " + wider_cmd;
    if (f.binding.source == BindingSource::Inherited && l.kind == LauncherKind::None)
        s += " (start it without taskset or numactl)";
    return s;
}

// Fewer threads than the cores reserved. The fix that converges is more
// threads (or processes) for the cores the job holds, or fewer cores asked
// of the batch system: a narrower binding of the same job (taskset, a
// launcher's binding) leaves the cores it no longer uses idle, which is
// warned about (idle-resources) with the advice to use them again.
std::string suggest_underloaded_reservation(const NodeFacts& f, const LauncherInfo& l, const Finding& finding,
                                            Remedy& remedy) {
    const std::size_t cores = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("cores", 1)));
    const std::size_t threads = static_cast<std::size_t>(std::max<std::int64_t>(1, finding.figure("threads", 1)));
    const std::size_t processes = std::max<std::size_t>(1, f.processes);
    const std::size_t per = std::max<std::size_t>(1, cores / processes);
    // Processes that ran one after another (their recorded lifetimes never
    // overlapped while they computed): more threads in each is not the fix,
    // running several at once is.
    if (const std::int64_t sequential = finding.figure("sequential_processes", 0); sequential > 1) {
        const std::string c = std::to_string(cores);
        return "The " + std::to_string(sequential) +
               " processes ran one after another: start up to " + c +
               " of them at a time (xargs -P " + c + ", GNU parallel -j " + c + ", make -j " + c +
               ") to use the " + counted(cores, "core") + ", or, if each must wait for the one before, ask the "
               "batch system for " + counted(threads, "core") + " instead of " + c;
    }
    const std::string fewer_cores = "or, if the program cannot use more, ask the batch system for " +
                                    counted(threads, "core") + " instead of " + std::to_string(cores) +
                                    " (binding it to fewer cores of the same allocation, with taskset or the "
                                    "launcher, leaves the others idle)";
    if (main_pool(f)) {
        remedy = remedy_of({processes, per, per}, f, l);
        remedy.processes_per_node = -1;
        remedy.cores_per_process = -1;
        remedy.launcher.clear();
        remedy.launcher_options.clear();
        const std::string cmd = command_of(remedy, LauncherInfo{});
        return "Use the reserved cores: " +
               (cmd.empty() ? "run " + counted(per, thread_noun(f)) + " per process" : cmd) + " (" +
               setting_was(f, per) + "), " + fewer_cores;
    }
    remedy = remedy_of({processes, per, per}, f, l);
    const std::string cmd = command_of(remedy, l);
    return "Create " + counted(per, "thread") + " per process that compute at once (" +
           std::to_string((threads + processes - 1) / processes) + " did)" + (cmd.empty() ? "" : ": " + cmd) + ", " +
           fewer_cores;
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
             " (" + (f.omp_num_threads.empty() ? std::string("OMP_NUM_THREADS was unset") : "OMP_NUM_THREADS was " + f.omp_num_threads) + ")";
    } else {
        s += "at most " + plural(per_process, "thread", "threads") + " computing at once" +
             (processes > 1 ? " in each process" : "");
    }
    return s + "; or " + larger;
}

// What one finding's suggestion is written from.
struct SuggestionInputs {
    const RunView& view;
    const NodeLoad& load;
    const NodeView& node;
    const NodeFacts& facts;
    const LauncherInfo& launcher;
};

std::string suggest_over_demand(const SuggestionInputs& in, Finding& f) {
    const AffinityCauses causes = affinity_causes(in.view, in.load);
    if (causes.caused_by_calls()) return suggest_affinity_calls(in.view, in.load, in.node, causes);
    return suggest_overloaded(in.facts, in.launcher, f.remedy);
}

// Which finding gets which suggestion (and fills its remedy); a finding
// whose code is not here gets none.
struct SuggestionRule {
    FindingCode code;
    std::string (*suggest)(const SuggestionInputs&, Finding&);
};

constexpr SuggestionRule kSuggestionRules[] = {
    {FindingCode::OverloadedResources, suggest_over_demand},
    {FindingCode::OverloadedReservation, suggest_over_demand},
    {FindingCode::IdleResources,
     [](const SuggestionInputs& in, Finding& f) { return suggest_idle(in.facts, in.launcher, f, f.remedy); }},
    {FindingCode::UnderloadedReservation,
     [](const SuggestionInputs& in, Finding& f) {
         return suggest_underloaded_reservation(in.facts, in.launcher, f, f.remedy);
     }},
    {FindingCode::CpuQuotaThrottled,
     [](const SuggestionInputs& in, Finding& f) { return suggest_quota(in.facts, in.launcher, f, f.remedy); }},
    {FindingCode::RuntimeContention,
     [](const SuggestionInputs& in, Finding& f) {
         return "Keep the two runtimes off each other's cores, or run fewer threads. " +
                suggest_overloaded(in.facts, in.launcher, f.remedy);
     }},
};

const SuggestionRule* rule_for(FindingCode code) {
    for (const SuggestionRule& r : kSuggestionRules)
        if (r.code == code) return &r;
    return nullptr;
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
        const SuggestionRule* rule = rule_for(f.code);
        if (rule == nullptr) continue;
        auto it = node_index.find(f.node);
        if (it == node_index.end()) continue;
        const NodeFacts& facts_n = facts_for(it->second);
        if (facts_n.processes == 0) continue;
        f.suggestion = rule->suggest({view, loads[it->second], view.nodes[it->second], facts_n, launcher}, f);
    }
}

}  // namespace stacksage
