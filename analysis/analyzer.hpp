// The analyzer: every check on a run, their findings combined, with the
// per-node and per-process summaries the reports show.
//
// Combination (the runtime-stacking paper runs both algorithms and reports
// per resource): when the flow-centric check finds a node's reservation
// overloaded, the resource-centric check has necessarily found over-demanded
// CPUs on that node (more threads than CPUs means some CPU gets more than
// one); the two are one problem, reported once as the resource-centric
// finding with the flow-centric numbers in its detail.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/activity.hpp"
#include "analysis/finding.hpp"
#include "analysis/launcher.hpp"
#include "analysis/memory_heatmap.hpp"
#include "analysis/node_groups.hpp"
#include "analysis/node_load.hpp"
#include "analysis/pu_usage.hpp"
#include "analysis/run_view.hpp"
#include "analysis/runtime_stacking.hpp"

namespace stacksage {

struct ProcessSummary {
    std::string host;
    std::int64_t rank = -1;
    std::int64_t pid = 0;
    std::string name;              // executable's base name
    bool launcher = false;
    std::string launcher_name;
    std::size_t threads = 0;       // flows, the main thread included
    std::size_t created_threads = 0;  // flows other than the main thread: those the process created
    std::size_t service_threads = 0;
    Cpuset cpus;                   // union of its flows' placements
    std::vector<RuntimeUse> runtimes;
    std::string category;
    std::string end_how;
    // Why its log ends before its end was recorded ("killed", "log-stopped",
    // "unknown"; run_view.hpp); "" when complete.
    std::string log_ends_early;
    // Threads the recorder did not see created (recording_gaps_check.hpp):
    // found alive at the end (counted in threads and created_threads), and the
    // CPU time of those that ended unseen (µs; 0: none).
    std::size_t untraced_threads = 0;
    std::int64_t unseen_cpu_us = 0;
};

struct NodeSummary {
    std::string host;
    std::size_t cores_available = 0;
    std::size_t cpus_available = 0;
    std::size_t cpus_total = 0;    // the node's size (complete cpuset)
    Cpuset available;
    bool job_restricted = false;
    bool smt = false;
    TopologySource topology_source = TopologySource::Hwloc;
    // The cgroups' CPU quota that limits the node's processes below its
    // available CPUs (NodeView::cpu_quota), in CPUs; 0: none.
    double cpu_quota = 0;
    std::vector<std::size_t> processes;  // indices into AnalysisResult::processes
    std::vector<std::size_t> launchers;
    // Only launchers ran here (mpirun on the submit host): shown as a launch
    // host, never judged for idle cores or reservations.
    bool launch_host = false;
    std::size_t threads = 0;
    std::size_t service_threads = 0;
    // The most severe finding about the node, run-wide findings included;
    // std::nullopt: none.
    std::optional<Severity> worst_severity;
    // CPUs that warnings or errors found over-subscribed (overloaded
    // resources or reservation, runtime contention).
    Cpuset oversubscribed;
};

struct AnalysisResult {
    std::string run_name;
    std::string run_command;
    LauncherInfo launcher;
    std::vector<NodeSummary> nodes;
    std::vector<ProcessSummary> processes;
    std::vector<Finding> findings;  // by node (run order), then severity (highest first), then check order
    std::vector<NodeMemoryHeatmap> memory;  // sampled memory accesses per node and level; empty without samples
    // What the checks saw, for the reports to render rather than rebuild:
    // the view with the activity the analysis used, and per view node its
    // load and its per-CPU usage. The view's strings point into the model it
    // was built from, which must outlive the result (moving the model keeps
    // them valid); view.model is null, since the model may move.
    RunView view;
    std::vector<NodeLoad> loads;      // by view node
    // What the loads were computed with: without their series rows
    // (series_rows false), a report that draws them computes one node's
    // at a time (node_load_with_series).
    NodeLoadOptions load_options;
    std::vector<PuUsage> pu_usage;    // by view node
    // Nodes with the same findings, as one (analysis/node_groups.hpp):
    // every node is in exactly one group; worst groups first.
    std::vector<NodeGroup> node_groups;
    std::size_t count(Severity severity) const;
    // Node n's load with its series rows: loads[n], or computed again with
    // the rows where the analysis left them out.
    NodeLoad node_load_with_series(std::uint32_t n) const;
};

struct AnalysisOptions {
    ActivityOptions activity;
    // Each node's load series rows (NodeLoadOptions::series_rows): only
    // the HTML page draws them.
    bool load_series_rows = true;
    // Threads the per-node and per-process work runs on; 0: one per core.
    // The result is the same for any number.
    unsigned threads = 0;
};

// Runs checks 1-7 on a view; the result keeps the view. options.activity
// is not read here: the view was built with it.
AnalysisResult analyze(RunView view, const AnalysisOptions& options = {});

// Builds the view of the model (activity per options) and analyses it.
AnalysisResult analyze(const Model& model, const AnalysisOptions& options = {});

}  // namespace stacksage
