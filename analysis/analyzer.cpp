#include "analysis/analyzer.hpp"

#include <algorithm>
#include <functional>
#include <map>

#include "analysis/completeness_check.hpp"
#include "analysis/cpu_quota_check.hpp"
#include "analysis/live_warning_check.hpp"
#include "analysis/flow_centric_check.hpp"
#include "analysis/node_load.hpp"
#include "analysis/resource_centric_check.hpp"
#include "analysis/smt_check.hpp"
#include "analysis/numa_locality_check.hpp"
#include "analysis/placement_check.hpp"
#include "analysis/recording_gaps_check.hpp"
#include "analysis/suggestions.hpp"
#include "analysis/temporal_stacking_check.hpp"
#include "core/parallel_for.hpp"

namespace stacksage {

std::size_t AnalysisResult::count(Severity severity) const {
    return static_cast<std::size_t>(
        std::count_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.severity == severity; }));
}

namespace {

void combine_overloads(std::vector<Finding>& findings) {
    std::map<std::string, Finding*> resource_overload;
    for (Finding& f : findings)
        if (f.code == FindingCode::OverloadedResources) resource_overload.emplace(f.node, &f);
    std::vector<bool> merged(findings.size(), false);
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Finding& f = findings[i];
        if (f.code != FindingCode::OverloadedReservation) continue;
        auto it = resource_overload.find(f.node);
        if (it == resource_overload.end()) continue;
        Finding& r = *it->second;
        r.check = "resource-centric+flow-centric";
        r.detail += (r.detail.empty() ? "" : "; ") + std::string("flow-centric: ") + f.message;
        merged[i] = true;
    }
    std::size_t kept = 0;
    for (std::size_t i = 0; i < findings.size(); ++i)
        if (!merged[i]) {
            if (kept != i) findings[kept] = std::move(findings[i]);
            ++kept;
        }
    findings.resize(kept);
}

// Within a node and a severity, findings follow the checks' order; the
// sampling checks' codes share the last rank (the stable sort keeps the
// order they were found in).
int check_order(FindingCode code) {
    static constexpr FindingCode kOrder[] = {
        FindingCode::IncompleteRecording, FindingCode::LogEndsEarly, FindingCode::AllocatedNodeUnused, FindingCode::CpuQuotaThrottled, FindingCode::OverloadedResources, FindingCode::OverloadedReservation, FindingCode::IdleResources,
        FindingCode::UnderloadedReservation, FindingCode::RuntimeContention, FindingCode::SharedResources,
        FindingCode::SmtSharedCores, FindingCode::SmtUnusedHardwareThreads, FindingCode::ServiceFlows,
        FindingCode::RuntimeStacking};
    for (int i = 0; i < static_cast<int>(std::size(kOrder)); ++i)
        if (code == kOrder[i]) return i;
    return static_cast<int>(std::size(kOrder));
}

}  // namespace

NodeLoad AnalysisResult::node_load_with_series(std::uint32_t n) const {
    if (load_options.series_rows) return loads[n];
    NodeLoadOptions with_rows = load_options;
    with_rows.series_rows = true;
    return compute_node_load(view, n, with_rows);
}

AnalysisResult analyze(const Model& model, const AnalysisOptions& options) {
    return analyze(build_run_view(model, options.activity, options.threads), options);
}

namespace {

// Findings whose resources are over-subscribed CPUs: the checks' verdict
// the HTML page colours in its "flows allowed" mode.
bool marks_oversubscription(const Finding& f) {
    if (f.severity == Severity::Info) return false;
    switch (f.code) {
        case FindingCode::OverloadedResources:
        case FindingCode::OverloadedReservation:
        case FindingCode::RuntimeContention: return true;
        default: return false;
    }
}

// Worst severity and over-subscribed CPUs of each node, from the findings.
void summarize_findings_per_node(const std::vector<Finding>& findings, std::vector<NodeSummary>& nodes) {
    for (NodeSummary& node : nodes)
        for (const Finding& f : findings) {
            if (!f.node.empty() && f.node != node.host) continue;
            if (!node.worst_severity || f.severity > *node.worst_severity) node.worst_severity = f.severity;
            if (f.node == node.host && marks_oversubscription(f)) node.oversubscribed |= f.resources;
        }
}

}  // namespace

namespace {

// Every check's findings, in the checks' order, overloads combined, with
// their suggestions. The checks read the view and the loads only: they run
// at once, on up to `threads` threads, each into its own slot.
std::vector<Finding> run_checks(const RunView& view, const std::vector<NodeLoad>& loads, const LauncherInfo& launcher,
                                unsigned threads) {
    const std::function<std::vector<Finding>()> checks[] = {
        [&] { return check_resource_centric(view, loads); },
        [&] { return check_flow_centric(view, loads); },
        [&] { return check_cpu_quota(view, loads); },
        [&] { return check_smt(view, loads); },
        [&] { return check_temporal_stacking(view, loads); },
        [&] { return check_service_flows(view); },
        [&] { return check_numa_locality(view, launcher); },
        [&] { return check_placement(view, launcher); },
        [&] { return check_completeness(view, launcher); },
        [&] { return check_recording_gaps(view); },
        [&] { return check_live_warnings(view); },
    };
    std::vector<std::vector<Finding>> found(std::size(checks));
    parallel_for(std::size(checks), threads, [&](std::size_t c) { found[c] = checks[c](); });
    std::vector<Finding> all;
    for (std::vector<Finding>& more : found)
        for (Finding& f : more) all.push_back(std::move(f));
    combine_overloads(all);
    add_suggestions(view, loads, launcher, all);
    return all;
}

ProcessSummary summarize_process(const RunView& view, const ProcessView& p, RuntimeStacking stacking) {
    ProcessSummary s;
    s.host = std::string(view.nodes[p.node].host);
    s.rank = p.rank;
    s.pid = p.pid;
    s.name = std::string(p.name);
    s.launcher = p.launcher;
    s.launcher_name = std::string(p.launcher_name);
    for (std::uint32_t f : p.flows) {
        const FlowView& flow = view.flows[f];
        s.cpus |= flow.placement;
        // The unseen flow stands for threads that ended unseen: their CPU time, no thread of its own.
        if (flow.kind == FlowKind::Unseen) {
            s.unseen_cpu_us = add_saturating(s.unseen_cpu_us, std::max<std::int64_t>(0, flow.cpu_time_us));
            continue;
        }
        ++s.threads;
        if (flow.service) ++s.service_threads;
        if (flow.kind != FlowKind::Main) ++s.created_threads;
        if (flow.untraced) ++s.untraced_threads;
    }
    s.log_ends_early = std::string(p.log_ends_early);
    s.runtimes = std::move(stacking.runtimes);
    s.category = std::move(stacking.category);
    s.end_how = std::string(p.end_how);
    return s;
}

// A node's summary; processes: the summaries of every process of the run.
NodeSummary summarize_node(const NodeView& node, const std::vector<ProcessSummary>& processes) {
    NodeSummary s;
    s.host = std::string(node.host);
    s.cores_available = node.cores.size();
    s.cpus_available = node.available.count();
    s.cpus_total = node.complete.count();
    s.available = node.available;
    s.job_restricted = node.job_restricted;
    s.smt = node.smt;
    s.topology_source = node.topology_source;
    s.cpu_quota = node.cpu_quota;
    for (std::uint32_t p : node.processes) {
        s.processes.push_back(p);
        s.threads += processes[p].threads;
        s.service_threads += processes[p].service_threads;
    }
    for (std::uint32_t p : node.launchers) s.launchers.push_back(p);
    s.launch_host = node.processes.empty() && !node.launchers.empty();
    return s;
}

// Run-wide findings first (an incomplete recording qualifies every other),
// then by node, in the nodes' order, then those about nodes that left no
// log (an allocated node left unused); within one, by severity, then in the
// checks' order.
void sort_findings(std::vector<Finding>& all, const std::vector<NodeSummary>& nodes) {
    std::map<std::string, std::size_t> node_rank;
    for (std::size_t n = 0; n < nodes.size(); ++n) node_rank.emplace(nodes[n].host, n);
    auto node_order = [&](const Finding& f) -> std::size_t {
        if (f.node.empty()) return 0;
        auto it = node_rank.find(f.node);
        return it == node_rank.end() ? node_rank.size() + 1 : it->second + 1;
    };
    std::stable_sort(all.begin(), all.end(), [&](const Finding& a, const Finding& b) {
        const std::size_t na = node_order(a);
        const std::size_t nb = node_order(b);
        if (na != nb) return na < nb;
        if (a.severity != b.severity) return a.severity > b.severity;
        return check_order(a.code) < check_order(b.code);
    });
}

}  // namespace

AnalysisResult analyze(RunView view, const AnalysisOptions& options) {
    AnalysisResult result;
    result.run_name = std::string(view.run_name);
    result.run_command = std::string(view.run_command);
    result.launcher = detect_launcher(view);

    // Each node's load and usage, and each process's summary, depend on the
    // view only: they are computed on every core, each into its own slot.
    const auto node_count = static_cast<std::uint32_t>(view.nodes.size());
    result.load_options.series_rows = options.load_series_rows;
    result.loads.resize(node_count);
    result.pu_usage.resize(node_count);
    parallel_for(node_count, options.threads, [&](std::size_t n) {
        const auto node = static_cast<std::uint32_t>(n);
        result.loads[n] = compute_node_load(view, node, result.load_options);
        result.pu_usage[n] = compute_pu_usage(view, node);
    });
    result.findings = run_checks(view, result.loads, result.launcher, options.threads);

    // Summaries.
    if (view.model) result.memory = build_memory_heatmaps(*view.model, options.threads);
    result.processes.resize(view.processes.size());
    parallel_for(view.processes.size(), options.threads, [&](std::size_t i) {
        const auto p = static_cast<std::uint32_t>(i);
        result.processes[i] = summarize_process(view, view.processes[i], summarize_runtime_stacking(view, p));
    });
    result.nodes.reserve(node_count);
    for (const NodeView& node : view.nodes) result.nodes.push_back(summarize_node(node, result.processes));
    sort_findings(result.findings, result.nodes);
    summarize_findings_per_node(result.findings, result.nodes);
    result.node_groups = group_nodes(result);
    result.view = std::move(view);
    result.view.model = nullptr;
    return result;
}

}  // namespace stacksage
