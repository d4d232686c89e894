#include "analysis/numa_locality_check.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>
#include <set>

#include "analysis/flow_refs.hpp"
#include "core/memory_level.hpp"
#include "core/run_model_schema.hpp"
#include "core/sample_backend.hpp"

namespace stacksage {

namespace {


constexpr const char* kCheck = "numa-locality";

bool is_memory_level(std::string_view word) {
    const std::optional<MemoryLevel> level = memory_level_from_string(word);
    return level == MemoryLevel::LocalDram || level == MemoryLevel::RemoteDram || level == MemoryLevel::RemoteCache ||
           level == MemoryLevel::Pmem || level == MemoryLevel::Cxl;
}

// Samples by (call site, data object) labels; "" where not attributed.
using SiteObjectCounts = std::map<std::pair<std::string, std::string>, std::uint64_t>;

struct FlowSamples {
    std::uint64_t dram = 0, dram_remote = 0;
    std::map<std::int64_t, std::uint64_t> remote_nodes;  // NUMA os index -> samples
    std::uint64_t pages = 0;
    std::map<std::int64_t, std::uint64_t> pages_on;      // NUMA os index -> first-touched pages
    SiteObjectCounts remote_by_site_object;  // remote DRAM samples
    SiteObjectCounts pages_by_site_object;   // first touches
};

// The label with the most samples in counts, on the side (first: site,
// second: object) picked, and its samples; "" when nothing is attributed.
std::pair<std::string, std::uint64_t> top_label(const SiteObjectCounts& counts, bool object,
                                                const std::string& only_object = "") {
    std::map<std::string, std::uint64_t> sums;
    for (const auto& [key, n] : counts) {
        if (!only_object.empty() && key.second != only_object) continue;
        const std::string& label = object ? key.second : key.first;
        if (!label.empty()) sums[label] += n;
    }
    std::pair<std::string, std::uint64_t> best{"", 0};
    for (const auto& [label, n] : sums)
        if (n > best.second) best = {label, n};
    return best;
}

// "the main thread", "thread 1235".
std::string thread_name(const FlowView& flow) {
    return flow.kind == FlowKind::Main ? fmt::format("the main thread ({})", flow.tid) : fmt::format("thread {}", flow.tid);
}

std::string rank_binding_advice(const LauncherInfo& launcher) {
    switch (launcher.kind) {
    case LauncherKind::OpenMPI: return "mpirun --map-by numa --bind-to numa";
    case LauncherKind::Slurm: return "srun --cpu-bind=ldoms";
    case LauncherKind::Mpich: return "mpiexec -bind-to numa";
    default: return "your launcher's option to bind each rank to a NUMA domain (mpirun --map-by numa --bind-to numa, srun --cpu-bind=ldoms)";
    }
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
    return whole ? fmt::format("{:.0f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "0 %";
}

}  // namespace

std::vector<Finding> check_numa_locality(const RunView& view, const LauncherInfo& launcher,
                                         const NumaLocalityOptions& o) {
    std::vector<Finding> findings;
    if (view.model == nullptr) return findings;
    const Model& m = *view.model;
    const RunModelKeys& k = m.run_keys();
    if (!k.level.present() || !k.backend.present() || !k.tid.present() || !k.pid.present())
        return findings;  // no samples in this run

    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        if (node.id == kNoComponent) continue;
        const std::vector<ComponentId> numas = m.descendants_of_type(node.id, ComponentType::Numa);
        if (numas.size() < 2) continue;  // nothing can be remote
        const auto numa_of_cpu = [&](unsigned cpu) -> std::int64_t {
            for (ComponentId c : numas)
                if (m.cpuset(c).contains(cpu)) return m.os_index(c);
            return -1;
        };
        // (pid, tid) -> flow index, for this node's processes.
        std::map<std::pair<std::int64_t, std::int64_t>, std::uint32_t> flow_of;
        for (std::uint32_t p : node.processes)
            for (std::uint32_t f : view.processes[p].flows)
                flow_of[{view.processes[p].pid, view.flows[f].tid}] = f;
        std::map<std::uint32_t, FlowSamples> samples;
        for (ComponentId pu : m.descendants_of_type(node.id, ComponentType::Thread)) {
            for (DataPathId dp : m.datapaths(pu, DataPathType::MemoryAccess, Direction::Out)) {
                const std::string_view backend = m.get(dp, k.backend).value_or("");
                const auto it = flow_of.find({m.get(dp, k.pid).value_or(0), m.get(dp, k.tid).value_or(0)});
                if (it == flow_of.end()) continue;
                FlowSamples& s = samples[it->second];
                const auto count = static_cast<std::uint64_t>(m.get_int(dp, keys::count).value_or(0));
                const ComponentId target = m.target(dp);
                const std::pair<std::string, std::string> site_object{std::string(m.get(dp, k.site).value_or("")),
                                                                      std::string(m.get(dp, k.object).value_or(""))};
                if (backend == to_string(SampleBackend::Pagefault)) {
                    s.pages += count;
                    if (m.type(target) == ComponentType::Numa) s.pages_on[m.os_index(target)] += count;
                    s.pages_by_site_object[site_object] += count;
                } else if (backend == to_string(SampleBackend::Pebs) || backend == to_string(SampleBackend::Ibs)) {
                    if (!is_memory_level(m.get(dp, k.level).value_or(""))) continue;
                    s.dram += count;
                    if (m.get(dp, k.remote).value_or(0) != 0) {
                        s.dram_remote += count;
                        if (m.type(target) == ComponentType::Numa) s.remote_nodes[m.os_index(target)] += count;
                        s.remote_by_site_object[site_object] += count;
                    }
                }
            }
        }
        if (samples.empty()) continue;

        // Remote accesses.
        std::vector<std::uint32_t> remote_flows;
        std::uint64_t sampled_flows = 0, remote_total = 0, dram_total = 0;
        for (const auto& [f, s] : samples) {
            if (s.dram < o.min_dram_samples) continue;
            ++sampled_flows;
            if (static_cast<double>(s.dram_remote) > o.remote_share * static_cast<double>(s.dram)) {
                remote_flows.push_back(f);
                remote_total += s.dram_remote;
                dram_total += s.dram;
            }
        }
        if (!remote_flows.empty()) {
            Finding f;
            f.code = FindingCode::NumaRemoteAccess;
            f.severity = Severity::Warning;
            f.check = kCheck;
            f.node = std::string(node.host);
            for (std::uint32_t fl : remote_flows) f.resources |= view.flows[fl].ran_on;
            attach_flows(f, view, remote_flows);
            f.message = fmt::format("{} of {} sampled thread{} get most of their memory from a remote NUMA node "
                                    "({} of their DRAM samples)",
                                    remote_flows.size(), sampled_flows, sampled_flows == 1 ? "" : "s",
                                    percent(remote_total, dram_total));
            std::string detail;
            for (std::size_t i = 0; i < remote_flows.size() && i < 5; ++i) {
                const FlowView& fl = view.flows[remote_flows[i]];
                const FlowSamples& s = samples[remote_flows[i]];
                std::string nodes;
                for (const auto& [numa, c] : s.remote_nodes) nodes += (nodes.empty() ? "" : ", ") + std::to_string(numa);
                detail += fmt::format("{}thread {} (pid {}): {} of {} DRAM samples remote{}", detail.empty() ? "" : "; ",
                                      fl.tid, view.processes[fl.process].pid, s.dram_remote, s.dram,
                                      nodes.empty() ? "" : " (node " + nodes + ")");
            }
            // Where the remote accesses were issued, and what they read.
            SiteObjectCounts remote_by_site_object;
            for (std::uint32_t fl : remote_flows)
                for (const auto& [key, n] : samples[fl].remote_by_site_object) remote_by_site_object[key] += n;
            const auto [site, site_n] = top_label(remote_by_site_object, false);
            const auto [object, object_n] = top_label(remote_by_site_object, true);
            std::string where;
            if (!site.empty())
                where = fmt::format("{} of the remote DRAM samples were issued in {}", percent(site_n, remote_total), site);
            if (!object.empty())
                where += fmt::format("{}{} were of the {}", where.empty() ? "" : "; ", percent(object_n, remote_total), object);
            f.detail = where.empty() ? detail : where + "; " + detail;
            f.suggestion = fmt::format(
                "Place data where its threads run: initialise it in parallel, with the same threads and schedule "
                "that later use it (Linux puts each page on the NUMA node of the thread that writes it first); "
                "keep threads near their data with OMP_PROC_BIND=close (or spread) and OMP_PLACES=cores; run "
                "each process under numactl --localalloc (or --membind=<its node>); and bind ranks to NUMA "
                "domains ({}).",
                rank_binding_advice(launcher));
            f.figures = {{"threads", static_cast<std::int64_t>(remote_flows.size())},
                         {"sampled_threads", static_cast<std::int64_t>(sampled_flows)},
                         {"remote_samples", static_cast<std::int64_t>(remote_total)},
                         {"dram_samples", static_cast<std::int64_t>(dram_total)}};
            findings.push_back(std::move(f));
        }

        // Serial first touch, per process.
        for (std::uint32_t p : node.processes) {
            const ProcessView& proc = view.processes[p];
            std::uint64_t pages = 0;
            std::uint32_t top = 0;
            std::uint64_t top_pages = 0;
            std::set<std::int64_t> run_nodes;
            for (std::uint32_t fl : proc.flows) {
                const FlowView& flow = view.flows[fl];
                // Where it was allowed to compute (the mask held longest);
                // the CPUs it was seen on are a few instants only.
                const Cpuset& where = !flow.placement.empty() ? flow.placement : flow.ran_on;
                if (!flow.service)
                    for (unsigned cpu : where)
                        if (const std::int64_t numa = numa_of_cpu(cpu); numa >= 0) run_nodes.insert(numa);
                const auto it = samples.find(fl);
                if (it == samples.end()) continue;
                pages += it->second.pages;
                if (it->second.pages > top_pages) {
                    top_pages = it->second.pages;
                    top = fl;
                }
            }
            if (pages < o.min_pages || run_nodes.size() < 2 || proc.flows.size() < 2) continue;
            if (static_cast<double>(top_pages) < o.serial_touch_share * static_cast<double>(pages)) continue;
            const FlowSamples& s = samples[top];
            std::int64_t home = -1;
            std::uint64_t home_pages = 0;
            for (const auto& [numa, c] : s.pages_on)
                if (c > home_pages) {
                    home = numa;
                    home_pages = c;
                }
            std::string nodes;
            for (std::int64_t numa : run_nodes) nodes += (nodes.empty() ? "" : ",") + std::to_string(numa);
            Finding f;
            f.code = FindingCode::NumaSerialFirstTouch;
            f.severity = Severity::Warning;
            f.check = kCheck;
            f.node = std::string(node.host);
            f.resources = proc.placement;
            attach_flows(f, view, {top});
            f.message = fmt::format(
                "one thread of pid {} first touched {} of its sampled pages{}, while its threads run on NUMA "
                "nodes {}",
                proc.pid, percent(top_pages, pages), home >= 0 ? fmt::format(" (they sit on node {})", home) : "",
                nodes);
            f.detail = fmt::format("thread {} caused {} of {} sampled page faults", view.flows[top].tid, top_pages, pages);
            // Which data it touched first, and where: "92 % of the first
            // touches of <object> were by the main thread in <site>".
            SiteObjectCounts process_pages;
            for (std::uint32_t fl : proc.flows)
                if (const auto it = samples.find(fl); it != samples.end())
                    for (const auto& [key, n] : it->second.pages_by_site_object) process_pages[key] += n;
            const auto [object, object_by_top] = top_label(s.pages_by_site_object, true);
            const auto [site, site_n] = top_label(s.pages_by_site_object, false, object);
            if (!object.empty()) {
                const std::uint64_t object_pages = top_label(process_pages, true, object).second;
                f.detail = fmt::format("{} of the first touches of the {} were by {}{}; ", percent(object_by_top, object_pages),
                                       object, thread_name(view.flows[top]), site.empty() ? "" : " in " + site) +
                           f.detail;
            } else if (const auto [only_site, n] = top_label(s.pages_by_site_object, false); !only_site.empty()) {
                f.detail = fmt::format("{} of its first touches were in {}; ", percent(n, top_pages), only_site) + f.detail;
            }
            f.suggestion =
                "Initialise the data in parallel, with the same threads and loop schedule that compute on it "
                "(e.g. an OpenMP parallel for with schedule(static) for the initialisation too), so each page is "
                "first touched, and placed, on the node of the thread that uses it; bind the threads "
                "(OMP_PROC_BIND=close, OMP_PLACES=cores) so they stay there. When the data cannot be split, "
                "numactl --interleave=all spreads it evenly instead.";
            f.figures = {{"pages", static_cast<std::int64_t>(pages)},
                         {"first_touch_pages", static_cast<std::int64_t>(top_pages)},
                         {"numa_nodes", static_cast<std::int64_t>(run_nodes.size())}};
            findings.push_back(std::move(f));
        }
    }
    return findings;
}

}  // namespace stacksage
