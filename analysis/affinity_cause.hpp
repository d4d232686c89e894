// Over-subscription that affinity calls made: which call bound the threads
// that then competed for a CPU.
//
// The node load (node_load.hpp) keeps, for its over-demanded CPUs, which
// flows were busy there while they were over-demanded and under which of
// their masks (OverDemandShare). A mask an affinity call set
// (AffinityInterval::set_by_affinity_call) names its cause: the thread that
// made the call, the call, when, and the module it came from. When masks
// set by affinity calls carried most of that busy time, the warning is
// theirs to fix: its suggestion addresses the calls, not the job's layout.
// Calls made before the program started (a launcher binding the process
// between fork and exec, recorded in the image before the exec) are the
// launcher's binding, which binding_origin.hpp tells.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

struct AffinityCause {
    std::uint32_t flow = 0;      // the flow whose mask the call set (index into view.flows)
    std::uint32_t interval = 0;  // index into its intervals
    std::int64_t busy_ns = 0;    // its busy time on the over-demanded CPUs while they were over-demanded
};

struct AffinityCauses {
    std::vector<AffinityCause> calls;  // longest first
    // Busy time on over-demanded CPUs while over-demanded: in all, and
    // under masks affinity calls set.
    std::int64_t over_demand_busy_ns = 0;
    std::int64_t by_calls_ns = 0;

    // Affinity calls carried most of the over-demand: they are its cause.
    bool caused_by_calls() const { return !calls.empty() && 2 * by_calls_ns >= over_demand_busy_ns; }
};

AffinityCauses affinity_causes(const RunView& view, const NodeLoad& load);

// "thread 1235 (rank 0) bound itself to CPU 0 with pthread_setaffinity_np at
// 1.00 s, called from rebind_midway (it had CPUs 0-1)": one call, times from
// the start of the node's run.
std::string describe_affinity_call(const RunView& view, const NodeLoad& load, const AffinityCause& cause);

// The calls, at most `most` of them described, "; " between them, then
// "and N more".
std::string describe_affinity_calls(const RunView& view, const NodeLoad& load, const AffinityCauses& causes,
                                    std::size_t most = 4);

}  // namespace stacksage
