#include "analysis/placement_check.hpp"

#include <fmt/format.h>

#include "analysis/flow_refs.hpp"
#include "core/run_model_schema.hpp"

namespace stacksage {

namespace {

constexpr const char* kCheck = "placement";

// How the run's launcher pins its processes, for the suggestion.
std::string pinning_advice(const LauncherInfo& launcher) {
    switch (launcher.kind) {
    case LauncherKind::OpenMPI: return "mpirun --bind-to core (or --bind-to numa)";
    case LauncherKind::Mpich: return "mpiexec -bind-to core";
    case LauncherKind::Slurm: return "srun --cpu-bind=cores";
    default: return "taskset or numactl --physcpubind";
    }
}

}  // namespace

std::vector<Finding> check_placement(const RunView& view, const LauncherInfo& launcher,
                                     const PlacementOptions& options) {
    std::vector<Finding> out;
    if (!view.model) return out;
    const Model& m = *view.model;
    const Key<std::int64_t> migrations_key = m.run_keys().migrations;

    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        std::vector<std::uint32_t> outside, migrating;
        Cpuset outside_cpus, migrating_cpus;
        std::int64_t moves = 0;
        for (std::uint32_t p : node.processes) {
            for (std::uint32_t fi : view.processes[p].flows) {
                const FlowView& f = view.flows[fi];
                if (f.ran_on.empty() || f.intervals.empty()) continue;
                // Only threads the cpu-clock sampler followed (they carry a
                // migrations count): a thread's last CPU alone says too little.
                const std::optional<std::int64_t> sampled_moves =
                    m.get(f.id, migrations_key);
                if (!sampled_moves) continue;
                Cpuset allowed;
                for (const AffinityInterval& i : f.intervals) allowed |= i.cpuset;
                if (const Cpuset extra = f.ran_on - allowed; !extra.empty()) {
                    outside.push_back(fi);
                    outside_cpus |= extra;
                }
                const std::int64_t moved = *sampled_moves;
                if (allowed.count() > 1 && moved >= options.min_migrations) {
                    migrating.push_back(fi);
                    migrating_cpus |= f.ran_on;
                    moves += moved;
                }
            }
        }
        if (!outside.empty()) {
            Finding f;
            f.code = FindingCode::RanOutsideAffinity;
            f.severity = Severity::Warning;
            f.check = kCheck;
            f.node = std::string(node.host);
            f.resources = outside_cpus;
            attach_flows(f, view, outside);
            f.message = fmt::format("{} thread{} ran on CPUs [{}] that no recorded affinity of theirs allowed",
                                    outside.size(), outside.size() == 1 ? "" : "s", outside_cpus.to_list_string());
            f.detail = "their masks were changed by a path the recorder does not see (a raw clone, a cgroup "
                       "change, another process's taskset), so the analysis of their placement is incomplete";
            f.suggestion = "Set affinity through sched_setaffinity/pthread_setaffinity_np or the runtime's own "
                           "binding (OMP_PROC_BIND/OMP_PLACES), or check what else changes the masks of this job";
            f.figures = {{"threads", static_cast<std::int64_t>(outside.size())}};
            out.push_back(std::move(f));
        }
        if (!migrating.empty()) {
            Finding f;
            f.code = FindingCode::ThreadMigrations;
            f.severity = Severity::Info;
            f.check = kCheck;
            f.node = std::string(node.host);
            f.resources = migrating_cpus;
            attach_flows(f, view, migrating);
            f.message = fmt::format("{} thread{} allowed on several CPUs moved between them while running "
                                    "({} moves seen between cpu-clock samples, on CPUs [{}])",
                                    migrating.size(), migrating.size() == 1 ? "" : "s", moves,
                                    migrating_cpus.to_list_string());
            f.suggestion = fmt::format("Pin each thread to one core so that its caches and memory stay near it: "
                                       "OMP_PROC_BIND=close OMP_PLACES=cores for OpenMP threads, {} for processes",
                                       pinning_advice(launcher));
            f.figures = {{"threads", static_cast<std::int64_t>(migrating.size())}, {"migrations", moves}};
            out.push_back(std::move(f));
        }
    }
    return out;
}

}  // namespace stacksage
