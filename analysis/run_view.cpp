#include "analysis/run_view.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

#include "analysis/activity.hpp"
#include "core/parallel_for.hpp"
#include "core/saturating.hpp"
#include "core/run_model_schema.hpp"

namespace stacksage {

std::optional<std::string_view> ProcessView::env_value(std::string_view name) const {
    for (const auto& [k, v] : env)
        if (k == name) return v;
    return std::nullopt;
}

std::optional<std::string_view> ProcessView::identity_value(std::string_view name) const {
    for (const auto& [k, v] : identity)
        if (k == name) return v;
    return std::nullopt;
}

std::int64_t FlowView::awake_ns() const {
    std::int64_t waited = 0;
    for (const TimeSpan& w : waits) waited = add_saturating(waited, w.length_ns());
    return std::max<std::int64_t>(0, lifetime_ns() - waited);
}

std::vector<std::uint32_t> NodeView::cores_touching(const Cpuset& s) const {
    std::vector<std::uint32_t> out;
    for (unsigned cpu : s) {
        if (cpu >= core_of_cpu.size() || core_of_cpu[cpu] < 0) continue;
        const auto c = static_cast<std::uint32_t>(core_of_cpu[cpu]);
        if (out.empty() || out.back() != c) {
            if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

Cpuset NodeView::widen_to_cores(const Cpuset& s) const {
    Cpuset out;
    for (std::uint32_t c : cores_touching(s)) out |= cores[c];
    return out;
}

std::string describe_cpu_quota(double cpus) {
    std::string n = fmt::format("{:.2f}", cpus);
    while (n.back() == '0') n.pop_back();
    if (n.back() == '.') n.pop_back();
    return n + (cpus > 1.0 + 1e-9 ? " CPUs" : " CPU");
}

std::uint32_t RunView::runtime_id(const RuntimeName& r) {
    for (std::uint32_t i = 0; i < runtimes.size(); ++i)
        if (runtimes[i].name == r.name) return i;
    runtimes.push_back(r);
    return static_cast<std::uint32_t>(runtimes.size() - 1);
}

std::string describe_cpus(const NodeView& node, const Cpuset& cpus) {
    if (!node.smt) return "Cores [" + cpus.to_list_string() + "]";
    const std::size_t cores = node.cores_count(cpus);
    return "CPUs [" + cpus.to_list_string() + "] (" + std::to_string(cores) + (cores == 1 ? " core)" : " cores)");
}

namespace {

template <class Id> std::string_view string_attr(const Model& m, Id id, Key<std::string> k) {
    return m.get(id, k).value_or(std::string_view{});
}

NodeView make_node(const Model& m, const RunModelKeys& k, ComponentId node) {
    NodeView n;
    n.id = node;
    n.host = m.get_string(node, keys::hostname).value_or(m.name(node));
    Cpuset pus;
    std::vector<ComponentId> threads = m.descendants_of_type(node, ComponentType::Thread);
    for (ComponentId pu : threads)
        if (m.os_index(pu) >= 0) pus.set(static_cast<unsigned>(m.os_index(pu)));
    n.available = m.get_cpuset(node, keys::cpuset).value_or(pus);
    n.available &= pus;  // a CPU without a PU component cannot be placed on
    n.complete = m.get_cpuset(node, keys::complete_cpuset).value_or(n.available);
    n.complete |= n.available;
    n.job_restricted = m.get(node, k.job_restricted).value_or(n.complete == n.available ? 0 : 1) != 0;
    // A word this reader does not know (a newer writer) reads as a file's topology.
    n.topology_source = topology_source_from_string(string_attr(m, node, k.topology_source)).value_or(TopologySource::Hwloc);
    n.core_of_cpu.assign(n.available.end_index(), -1);
    auto add_core = [&](const Cpuset& s) {
        if (s.empty()) return;
        for (unsigned cpu : s)
            if (cpu < n.core_of_cpu.size()) n.core_of_cpu[cpu] = static_cast<std::int32_t>(n.cores.size());
        if (s.count() > 1) n.smt = true;
        n.cores.push_back(s);
    };
    for (ComponentId core : m.descendants_of_type(node, ComponentType::Core)) {
        Cpuset s;
        for (ComponentId pu : m.descendants_of_type(core, ComponentType::Thread))
            if (m.os_index(pu) >= 0 && n.available.contains(static_cast<unsigned>(m.os_index(pu))))
                s.set(static_cast<unsigned>(m.os_index(pu)));
        add_core(s);
    }
    // PUs outside any Core (topologies without core information): each is a core.
    for (unsigned cpu : n.available)
        if (n.core_of_cpu[cpu] < 0) {
            Cpuset one;
            one.set(cpu);
            add_core(one);
        }
    // Cores in CPU order, whatever the tree's order.
    std::vector<std::uint32_t> order(n.cores.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        return *n.cores[a].first() < *n.cores[b].first();
    });
    std::vector<Cpuset> sorted;
    for (std::uint32_t i : order) sorted.push_back(n.cores[i]);
    n.cores = std::move(sorted);
    for (std::uint32_t c = 0; c < n.cores.size(); ++c)
        for (unsigned cpu : n.cores[c]) n.core_of_cpu[cpu] = static_cast<std::int32_t>(c);
    return n;
}

void read_intervals(const Model& m, const RunModelKeys& k, FlowView& f) {
    struct Piece {
        std::int64_t start, end;
        unsigned cpu;
        DataPathId dp;
    };
    std::vector<Piece> pieces;
    for (DataPathId dp : m.datapaths(f.id, DataPathType::MayRunOn, Direction::Out)) {
        const std::int64_t os = m.os_index(m.target(dp));
        if (os < 0) continue;
        pieces.push_back({m.get_int(dp, keys::start_ns).value_or(f.start_ns),
                          m.get_int(dp, keys::end_ns).value_or(f.end_ns), static_cast<unsigned>(os), dp});
    }
    std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
        return a.start != b.start ? a.start < b.start : a.end < b.end;
    });
    // The paths of one interval (one per CPU) carry the same times and cause.
    for (const Piece& p : pieces) {
        if (f.intervals.empty() || f.intervals.back().start_ns != p.start || f.intervals.back().end_ns != p.end) {
            AffinityInterval iv;
            iv.start_ns = p.start;
            iv.end_ns = p.end;
            iv.set_by = string_attr(m, p.dp, k.set_by);
            iv.api = string_attr(m, p.dp, k.set_by_api);
            iv.caller_tid = m.get(p.dp, k.set_by_tid).value_or(-1);
            iv.caller_module = string_attr(m, p.dp, k.set_by_module);
            f.intervals.push_back(iv);
        }
        f.intervals.back().cpuset.set(p.cpu);
    }
    // A model from a file may hold overlapping intervals: a later one starts
    // where the earlier ends (the later mask was set then).
    for (std::size_t i = 1; i < f.intervals.size(); ++i)
        if (f.intervals[i - 1].end_ns > f.intervals[i].start_ns)
            f.intervals[i - 1].end_ns = std::max(f.intervals[i - 1].start_ns, f.intervals[i].start_ns);
    const AffinityInterval* longest = nullptr;
    for (const AffinityInterval& iv : f.intervals)
        if (!longest || iv.length_ns() >= longest->length_ns()) longest = &iv;
    if (longest) f.placement = longest->cpuset;
    for (DataPathId dp : m.datapaths(f.id, DataPathType::RanOn, Direction::Out))
        if (const std::int64_t os = m.os_index(m.target(dp)); os >= 0) f.ran_on.set(static_cast<unsigned>(os));
}

// The waits the recorder saw (WaitedFor paths), clipped to the flow's life,
// in time order and without overlaps.
void read_waits(const Model& m, const RunModelKeys& k, FlowView& f) {
    if (!k.waited_for) return;
    for (DataPathId dp : m.datapaths(f.id, *k.waited_for, Direction::Out)) {
        TimeSpan w;
        w.start_ns = std::max(m.get_int(dp, keys::start_ns).value_or(f.start_ns), f.start_ns);
        w.end_ns = std::min(m.get_int(dp, keys::end_ns).value_or(f.start_ns), f.end_ns);
        w.cpu_ns = m.get(dp, k.wait_cpu_ns).value_or(-1);
        if (w.end_ns > w.start_ns) f.waits.push_back(w);
    }
    std::sort(f.waits.begin(), f.waits.end(),
              [](const TimeSpan& a, const TimeSpan& b) { return a.start_ns < b.start_ns; });
    std::int64_t covered = f.start_ns;
    std::erase_if(f.waits, [&](TimeSpan& w) {
        w.start_ns = std::max(w.start_ns, covered);
        if (w.end_ns <= w.start_ns) return true;
        covered = w.end_ns;
        return false;
    });
}

// A thread's creator read its own CPU time as it created it: a reading of
// the creator's curve (activity.hpp), found by the creator's tid among the
// flows of the process alive then.
void add_creator_readings(const Model& m, const RunModelKeys& k, RunView& view, const ProcessView& p) {
    if (!k.creator_cpu_ns.present() || !k.create_ns.present() || !k.creator_tid.present()) return;
    std::unordered_map<std::int64_t, std::vector<std::uint32_t>> flows_of_tid;  // tids are reused
    for (std::uint32_t child : p.flows) {
        const ComponentId id = view.flows[child].id;
        const auto cpu = m.get(id, k.creator_cpu_ns);
        const auto when = m.get(id, k.create_ns);
        const auto creator = m.get(id, k.creator_tid);
        if (!cpu || !when || !creator || *cpu < 0) continue;
        if (flows_of_tid.empty())
            for (std::uint32_t f : p.flows) flows_of_tid[view.flows[f].tid].push_back(f);
        auto it = flows_of_tid.find(*creator);
        if (it == flows_of_tid.end()) continue;
        for (std::uint32_t f : it->second) {
            FlowView& flow = view.flows[f];
            if (*when < flow.start_ns || *when > flow.end_ns) continue;
            flow.cpu_readings.push_back({*when, *cpu});
            break;
        }
    }
    for (std::uint32_t f : p.flows) {
        auto& readings = view.flows[f].cpu_readings;
        std::sort(readings.begin(), readings.end(), [](const CpuReading& a, const CpuReading& b) { return a.t < b.t; });
    }
}

// mpirun reaches other hosts through a remote shell it starts (ssh, rsh:
// Open MPI's plm_rsh_agent, Hydra's bootstrap, or a site's wrapper script
// around them) and Hydra its local ranks through proxies: the recorder
// follows them, since they inherit LD_PRELOAD, but they are the launch, not
// the application. Every rank carries its launcher's rank variable, so a
// process an MPI launcher started on its own host that is none of the
// job's ranks is the launch's plumbing (not so under salloc or slurmstepd,
// whose children without a rank are the user's shell or job script). So
// is an idle process that only started a launcher and waited for it
// (`timeout 3600 mpirun ...`, `time srun ...`, a batch script's shell,
// which Slurm gives SLURM_PROCID=0 beside the step's real rank 0). All are
// shown as launchers, never judged.
void mark_launch_plumbing(RunView& view) {
    static constexpr std::string_view kRemoteShells[] = {"ssh", "rsh", "qrsh", "blaunch"};
    static constexpr std::string_view kMpiLaunchers[] = {
        "mpirun",          "mpiexec",      "orterun",       "prterun",       "prte",           "mpiexec.hydra",
        "mpirun.openmpi",  "mpiexec.openmpi", "mpirun.mpich", "mpiexec.mpich", "hydra_pmi_proxy"};
    auto named = [](std::string_view name, const auto& list) {
        return std::find(std::begin(list), std::end(list), name) != std::end(list);
    };
    auto parent_of = [](const ProcessView& p, const ProcessView& child) {
        return p.node == child.node && p.pid == child.ppid;
    };
    auto idle = [&](const ProcessView& p) {
        return std::all_of(p.flows.begin(), p.flows.end(), [&](std::uint32_t f) { return view.flows[f].service; });
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (ProcessView& p : view.processes) {
            if (p.launcher) continue;
            const bool plumbing = p.rank < 0 && std::any_of(view.processes.begin(), view.processes.end(), [&](const ProcessView& q) {
                return q.launcher && parent_of(q, p) && (named(q.launcher_name, kMpiLaunchers) || named(p.name, kRemoteShells));
            });
            const bool wraps_launcher = idle(p) && std::any_of(view.processes.begin(), view.processes.end(), [&](const ProcessView& q) {
                                            return q.launcher && parent_of(p, q);
                                        });
            if (!plumbing && !wraps_launcher) continue;
            p.launcher = true;
            p.launcher_name = p.name;
            changed = true;
        }
    }
}

CpuQuotaView read_cpu_quota(const Model& m, const RunModelKeys& k, ComponentId process) {
    CpuQuotaView q;
    q.quota_us = m.get(process, k.cpu_quota_us).value_or(-1);
    q.period_us = m.get(process, k.cpu_period_us).value_or(-1);
    if (!q.present()) return CpuQuotaView{};
    q.cgroup = string_attr(m, process, k.cpu_quota_cgroup);
    q.periods_start = m.get(process, k.cpu_periods_start).value_or(-1);
    q.throttled_start = m.get(process, k.cpu_throttled_start).value_or(-1);
    q.throttled_ns_start = m.get(process, k.cpu_throttled_ns_start).value_or(-1);
    q.periods_end = m.get(process, k.cpu_periods_end).value_or(-1);
    q.throttled_end = m.get(process, k.cpu_throttled_end).value_or(-1);
    q.throttled_ns_end = m.get(process, k.cpu_throttled_ns_end).value_or(-1);
    return q;
}

// A node's quota (NodeView::cpu_quota): only where no application process
// may run beyond one; each quota cgroup counted once (its processes share it).
void set_node_quotas(RunView& view) {
    for (NodeView& node : view.nodes) {
        if (node.processes.empty()) continue;
        std::vector<std::pair<std::string_view, double>> cgroups;
        bool all = true;
        for (std::uint32_t p : node.processes) {
            const CpuQuotaView& q = view.processes[p].cpu_quota;
            if (!q.present()) {
                all = false;
                break;
            }
            // Without the cgroup's name (never from this recorder), each process is its own.
            if (!q.cgroup.empty() && std::any_of(cgroups.begin(), cgroups.end(),
                                                 [&](const auto& c) { return c.first == q.cgroup; }))
                continue;
            cgroups.emplace_back(q.cgroup, q.cpus());
        }
        if (!all) continue;
        double sum = 0;
        for (const auto& c : cgroups) sum += c.second;
        if (sum < static_cast<double>(node.available.count())) node.cpu_quota = sum;
    }
}

// The node of a host in the view; a process on a host without a Node gets
// an empty one, so that it is still shown (with no cores to check).
std::uint32_t node_of_host(RunView& view, std::unordered_map<std::string_view, std::uint32_t>& node_by_host,
                           std::string_view host) {
    auto it = node_by_host.find(host);
    if (it == node_by_host.end()) {
        NodeView n;
        n.host = host;
        view.nodes.push_back(std::move(n));
        it = node_by_host.emplace(host, static_cast<std::uint32_t>(view.nodes.size() - 1)).first;
    }
    return it->second;
}

// A Process component's own attributes (not its node, flows or placement).
ProcessView read_process(const Model& model, const RunModelKeys& k, ComponentId pid) {
    ProcessView p;
    p.id = pid;
    p.pid = model.get(pid, k.pid).value_or(model.os_index(pid));
    p.ppid = model.get(pid, k.ppid).value_or(-1);
    p.rank = model.get(pid, k.rank).value_or(-1);
    p.launcher = model.kind(pid) == to_string(ProcessKind::Launcher);
    p.launcher_name = string_attr(model, pid, k.launcher);
    p.exe = string_attr(model, pid, k.exe);
    p.cmdline = string_attr(model, pid, k.cmdline);
    p.program_start_cpuset = model.get(pid, k.program_start_cpuset);
    p.name = model.name(pid);
    p.end_how = string_attr(model, pid, k.end_how);
    p.log_ends_early = string_attr(model, pid, k.log_ends_early);
    p.log_stop_error = string_attr(model, pid, k.log_stop_error);
    p.start_ns = model.get_int(pid, keys::start_ns).value_or(0);
    p.end_ns = model.get_int(pid, keys::end_ns).value_or(p.start_ns);
    p.mpi = model.has(pid, k.mpi_init_ns);
    p.mpi_size = model.get(pid, k.mpi_size).value_or(-1);
    p.program_start_ns = model.get(pid, k.program_start_ns).value_or(p.start_ns);
    p.cpu_quota = read_cpu_quota(model, k, pid);
    model.for_each_attr(pid, [&](AttrKey key, const AttributeValue& v) {
        const std::string_view name = model.key_name(key);
        if (!std::holds_alternative<std::string>(v)) return;
        const std::string_view value = *model.get_string(pid, key);
        if (name.starts_with(run_keys::env_prefix))
            p.env.emplace_back(name.substr(run_keys::env_prefix.size()), value);
        else if (name.starts_with(run_keys::identity_prefix))
            p.identity.emplace_back(name.substr(run_keys::identity_prefix.size()), value);
    });
    return p;
}

// A Flow component of process p (the view's process_index) as recorded: not
// yet its runtime, its creator's readings or its activity.
FlowView read_flow(const Model& model, const RunModelKeys& k, ComponentId fid, std::uint32_t process_index,
                   const ProcessView& p) {
    FlowView f;
    f.id = fid;
    f.process = process_index;
    f.tid = model.get(fid, k.tid).value_or(model.os_index(fid));
    f.kind = flow_kind_from_string(model.kind(fid)).value_or(FlowKind::Thread);
    f.untraced = model.get(fid, k.untraced).value_or(0) != 0;
    f.name = model.name(fid);
    f.creator_module = string_attr(model, fid, k.creator_module);
    f.start_ns = model.get_int(fid, keys::start_ns).value_or(p.start_ns);
    f.end_ns = model.get_int(fid, keys::end_ns).value_or(p.end_ns);
    const auto u = model.get(fid, k.utime_us), s = model.get(fid, k.stime_us);
    if (u || s) f.cpu_time_us = add_saturating(u.value_or(0), s.value_or(0));
    f.voluntary_switches = model.get(fid, k.nvcsw).value_or(-1);
    f.involuntary_switches = model.get(fid, k.nivcsw).value_or(-1);
    f.run_delay_ns = model.get(fid, k.run_delay_ns).value_or(-1);
    f.run_slices = model.get(fid, k.run_slices).value_or(-1);
    read_intervals(model, k, f);
    read_waits(model, k, f);
    return f;
}

// The runtime that created flow f of process p: the application for the
// main thread, "untraced" for threads the recorder never saw created, else
// the creator module's runtime (classified once per module; a process's own
// executable is not remembered: what it is depends on the process).
std::uint32_t runtime_of(RunView& view, const FlowView& f, const ProcessView& p,
                         std::unordered_map<std::string_view, std::uint32_t>& runtime_by_module,
                         std::uint32_t application) {
    if (f.kind == FlowKind::Main) return application;
    if (f.untraced || f.kind == FlowKind::Unseen) return view.runtime_id({"untraced", RuntimeFamily::Unknown});
    if (auto r = runtime_by_module.find(f.creator_module); r != runtime_by_module.end() && f.creator_module != p.exe)
        return r->second;
    const std::uint32_t runtime = view.runtime_id(classify_module(f.creator_module, p.exe));
    if (f.creator_module != p.exe) runtime_by_module.emplace(f.creator_module, runtime);
    return runtime;
}

}  // namespace

RunView build_run_view(const Model& model) { return build_run_view(model, ActivityOptions{}); }

RunView build_run_view(const Model& model, const ActivityOptions& activity, unsigned threads) {
    RunView view;
    view.model = &model;
    const RunModelKeys& k = model.run_keys();
    for (ComponentId root : model.components_of_type(ComponentType::Topology)) {
        if (model.parent(root) != kNoComponent) continue;
        view.run_name = model.name(root);
        view.run_command = string_attr(model, root, k.run_command);
        if (auto key = model.find_key(run_keys::run_launch_ranks))
            view.launch_ranks = model.get_int(root, *key).value_or(-1);
        if (auto key = model.find_key(run_keys::run_launch_hosts))
            view.launch_hosts = model.get_string(root, *key).value_or(std::string_view{});
        break;
    }
    // Nodes, processes and flows are read from the model on every core,
    // each into its own slot; what depends on the order they come in (the
    // nodes made for hosts without one, the runtimes by first appearance)
    // is then done in that order.
    const std::vector<ComponentId> node_ids = model.components_of_type(ComponentType::Node);
    view.nodes.resize(node_ids.size());
    parallel_for(node_ids.size(), threads, [&](std::size_t n) { view.nodes[n] = make_node(model, k, node_ids[n]); });
    std::unordered_map<std::string_view, std::uint32_t> node_by_host;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) node_by_host.emplace(view.nodes[n].host, n);

    const std::vector<ComponentId> processes = model.components_of_type(ComponentType::Process);
    // A process's flows are consecutive in view.flows, in process order:
    // where each process's start. The flows are sized once (growing by
    // doubling holds the old and the new array at once, a third of the view
    // at a million flows).
    std::vector<std::uint32_t> first_flow(processes.size() + 1, 0);
    for (std::size_t i = 0; i < processes.size(); ++i) {
        std::uint32_t flows = 0;
        for (ComponentId fid = model.first_child(processes[i]); fid != kNoComponent; fid = model.next_sibling(fid))
            if (model.type(fid) == ComponentType::Flow) ++flows;
        first_flow[i + 1] = first_flow[i] + flows;
    }
    view.processes.resize(processes.size());
    view.flows.resize(first_flow.back());
    parallel_for(processes.size(), threads, [&](std::size_t i) {
        ProcessView& p = view.processes[i];
        p = read_process(model, k, processes[i]);
        p.flows.reserve(first_flow[i + 1] - first_flow[i]);
        std::uint32_t f = first_flow[i];
        for (ComponentId fid = model.first_child(processes[i]); fid != kNoComponent; fid = model.next_sibling(fid)) {
            if (model.type(fid) != ComponentType::Flow) continue;
            view.flows[f] = read_flow(model, k, fid, static_cast<std::uint32_t>(i), p);
            p.flows.push_back(f++);
        }
    });
    std::unordered_map<std::string_view, std::uint32_t> runtime_by_module;
    const std::uint32_t application = view.runtime_id({"application", RuntimeFamily::Application});
    for (std::size_t i = 0; i < processes.size(); ++i) {
        ProcessView& p = view.processes[i];
        p.node = node_of_host(view, node_by_host, model.get_string(processes[i], keys::hostname).value_or(std::string_view{}));
        for (std::uint32_t f : p.flows) view.flows[f].runtime = runtime_of(view, view.flows[f], p, runtime_by_module, application);
    }
    parallel_for(processes.size(), threads, [&](std::size_t i) {
        ProcessView& p = view.processes[i];
        add_creator_readings(model, k, view, p);
        for (std::uint32_t f : p.flows) {
            classify_activity(view.flows[f], activity);
            if (!view.flows[f].service) p.placement |= view.flows[f].placement;
        }
    });
    mark_launch_plumbing(view);
    for (std::uint32_t i = 0; i < view.processes.size(); ++i) {
        NodeView& node = view.nodes[view.processes[i].node];
        (view.processes[i].launcher ? node.launchers : node.processes).push_back(i);
    }
    set_node_quotas(view);
    return view;
}

}  // namespace stacksage
