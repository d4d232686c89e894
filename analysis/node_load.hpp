// NodeLoad: how loaded each CPU of a node got, when, and for how long.
//
// The runtime-stacking paper's checks are static: a flow "may use" the CPUs
// of its mask for the whole run. Flows have lifetimes and pauses, though: a
// program that starts a thousand short threads one after the other never
// has more than one running, and a main thread that waits in pthread_join
// for its workers does not compete with them. So the counts here are taken
// over time: a sweep over the busy intervals of the node's flows
// (activity.hpp: service flows and recorded waits excluded) keeps, for every
// CPU, the expected demand on it, and measures how long it was too high:
//  - thread granularity: a flow allowed on k CPUs adds 1/k to each. Threads
//    of one process that share its cpuset are then flagged only when they
//    outnumber it (the paper's rule for combining the granularities), and a
//    CPU is over-demanded while the sum is above 1.
//  - process granularity: a CPU that flows of two processes may use at the
//    same moment is shared (the paper's spatially concurrent configuration);
//    shared without being over-demanded, nothing waits for it.
// The same demand is also summed per core, which tells SMT sharing apart.
//
// Placement is taken at each moment too: a flow's busy time is cut at its
// mask changes (FlowView::intervals), and each piece adds to the CPUs of the
// mask held then. Two threads that ran free for a second and then bound
// themselves to one CPU over-demanded that CPU for that second only.
//
// Moments do not make verdicts: a CPU counts as over-demanded only when its
// over-demand lasted at least NodeLoadOptions' threshold in all (the
// instant between a pthread_create and the creator's pthread_join is no
// over-subscription), and the peaks are the highest levels held that long.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/run_view.hpp"
#include "core/saturating.hpp"

namespace stacksage {

struct NodeLoadOptions {
    // Over-demand shorter than the larger of these, in all, is not reported.
    // A creator runs while its new threads start (under AddressSanitizer a
    // burst of creates took 8 ms, 2 % of a 0.44 s run): such moments, and
    // anything too brief to cost a run much, are not an over-subscription.
    std::int64_t min_overload_ns = 10'000'000;
    double min_overload_fraction = 0.05;  // of the node's run time (NodeLoad::run_start_ns/run_end_ns)
    // Over-demand episodes shorter than this are left out of the time
    // findings give. Shorter than a quarter of the threshold or than
    // creator_stretch_ns, they are left out of the window ("from 1.20 s to
    // 4.80 s"), of the flows named and of the page's shading, unless nothing
    // else is left: a creator busy beside its new threads until it joins
    // them is no start of an over-subscription, and activity.hpp takes a
    // stretch under 20 ms between two CPU readings as busy when the flow is.
    std::int64_t min_window_episode_ns = 1'000'000;
    std::int64_t creator_stretch_ns = 20'000'000;
    // Bins of the load series (LoadSeries), and at most this many rows:
    // beyond, a row holds several cores.
    std::size_t series_bins = 240;
    std::size_t series_max_rows = 32;
    // The series' rows (LoadSeries::rows): about 30 KB a node, which only
    // the HTML page draws; the text and JSON reports and `check` leave them
    // out (2 GB at 62,500 nodes). The busy flows and windows stay.
    bool series_rows = true;
};

// A flow busy on an over-demanded CPU while it was over-demanded, under
// one of its masks (FlowView::intervals[interval]): what the
// over-subscription warning names, and, where an affinity call set that
// mask, its cause.
struct OverDemandShare {
    std::uint32_t flow = 0;      // index into view.flows
    std::uint32_t interval = 0;  // index into that flow's intervals
    std::int64_t ns = 0;         // how long, in all
};

// The load over time, for the page's timeline: the node's run cut into
// equal bins, and per row (a CPU the flows may use, or where they may use
// more than series_max_rows CPUs a group of consecutive cores) the threads
// that wanted each of its CPUs, averaged over each bin; the busy flows
// likewise; and the windows in which some CPU was over-demanded.
struct LoadSeries {
    struct Row {
        Cpuset cpus;
        std::vector<float> demand;  // per bin: threads wanting a CPU of the row, per CPU of it
        bool over_demanded = false; // holds a CPU found over-demanded
    };
    std::int64_t start_ns = 0;
    std::int64_t bin_ns = 0;
    std::size_t bins = 0;
    std::vector<Row> rows;
    std::vector<float> busy_flows;    // per bin: flows busy at once, on average
    std::vector<TimeSpan> over_windows;  // over-demand of the CPUs found over-demanded, the episodes of the window, merged
};

struct NodeLoad {
    std::vector<std::uint32_t> active_flows;  // of application processes, with a placement and a busy interval
    std::size_t active_processes = 0;  // application processes with at least one active flow
    // The CPUs reserved for the active flows (only available CPUs): for each,
    // the mask it was busy under longest, and any other it was busy under
    // for the threshold in all.
    Cpuset reserved;
    Cpuset shared;           // CPUs flows of two or more processes may use at one moment
    Cpuset over_demanded;    // CPUs whose demand was above 1 for at least the threshold
    Cpuset core_over_demanded;  // CPUs of cores whose summed demand was above 1 that long (SMT sharing)
    std::size_t peak_flows = 0;      // most busy flows at one moment, held for at least the threshold
    std::size_t peak_processes = 0;  // most processes with busy flows at one moment, held likewise
    // Per application process with busy flows (an index into view.processes):
    // its most busy flows at one moment, held for at least the threshold.
    std::vector<std::pair<std::uint32_t, std::size_t>> process_peak_flows;
    // Per entry of process_peak_flows: how long the process had a busy flow.
    std::vector<std::int64_t> process_busy_ns;
    // The processes of process_peak_flows that were busy while CPUs were
    // over-demanded, for at least the threshold in all: those that made the
    // demand. A pool's parent that computed before it forked its workers
    // and then waited for them is not one. Empty without over-demand.
    std::vector<std::uint32_t> over_demand_processes;
    double peak_demand = 0;          // highest demand a CPU held for at least the threshold without a break
    // The node's run: from the first process's start to the last one's end
    // (launchers included), the clock findings' times are given on.
    std::int64_t run_start_ns = 0;
    std::int64_t run_end_ns = 0;
    // While some CPU was over-demanded: in all, and from the first moment to the last.
    std::int64_t over_demanded_ns = 0;
    std::int64_t first_over_demand_ns = -1;
    std::int64_t last_over_demand_ns = -1;
    std::int64_t threshold_ns = 0;   // the threshold that applied
    // Who was busy on the over-demanded CPUs while they were over-demanded
    // (the episodes of the window), per flow and mask, longest first; shares
    // shorter than the window's shortest episode are left out (a creator
    // beside its new threads), unless all are that short.
    std::vector<OverDemandShare> over_demand_shares;
    // Flow-centric, over time: moments when more flows were busy than there
    // were CPUs in the masks they held then (the paper's Algorithm 1 at each
    // moment). How long in all, the most flows busy then (held for the
    // threshold in all; where nothing was held that long, the most seen),
    // the most processes they came from, and the CPUs their masks covered
    // then.
    std::int64_t crowded_ns = 0;
    std::size_t crowded_peak_flows = 0;
    std::size_t crowded_peak_processes = 0;
    Cpuset crowded_cpus;
    Cpuset crowded_instant_cpus;  // likewise at instants (the moments of runs shorter than the threshold)
    LoadSeries series;

    std::int64_t run_ns() const { return run_end_ns > run_start_ns ? subtract_saturating(run_end_ns, run_start_ns) : 0; }
    // The flows of over_demand_shares, each once, in that order.
    std::vector<std::uint32_t> over_demand_flows() const;
};

// The load of node `node` (an index into view.nodes).
NodeLoad compute_node_load(const RunView& view, std::uint32_t node, const NodeLoadOptions& options = {});

// Cores of the node none of whose CPUs is in `reserved` (as their CPUs).
Cpuset idle_cores(const NodeView& node, const Cpuset& reserved);

// "62 % of the run (2.90 s of 4.70 s, from 1.20 s to 4.80 s)", or "the
// whole run (10.0 s)": how long the node's CPUs were over-demanded, times
// from the start of its run.
std::string describe_over_demand(const NodeLoad& load);

// The over-demand of several nodes as one phrase, for a group's
// overloaded-resources finding: "97–100 % of the run (9.70–10.0 s of
// 10.0 s, from 0 ms–0.30 s to 10.0 s)", or "the whole run (10.0 s)" when it
// was the whole run on each (describe_over_demand's words for one node).
std::string describe_over_demand_range(const std::vector<const NodeLoad*>& loads);

// A duration as the findings give it: "12 ms", "1.20 s", "14.5 s".
std::string seconds_text(std::int64_t ns);

}  // namespace stacksage
