// Activity: which flows actually computed.
//
// MPI progress threads, PMIx and libevent helpers, OpenMP monitor threads, a
// main thread that only waits for its workers: alive for the whole run but
// nearly idle. They are service flows: listed, never enough on their own to
// make a core over-subscribed (the load checks count only active flows).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

struct ActivityOptions {
    // A flow whose CPU time is below this fraction of its lifetime is a
    // service flow. 10 %: a progress thread that polls a little stays below,
    // a compute thread that waits at barriers half of the time stays above.
    double service_fraction = 0.10;
    // Shorter lifetimes are not classified (the CPU-time clock is too coarse
    // to tell): such flows count as active.
    std::int64_t min_lifetime_ns = 20'000'000;
};

// Sets flow.cpu_fraction and flow.service. A flow whose CPU time is unknown
// (killed before its end was recorded) is active: the checks err on the side
// of counting it.
void classify_activity(FlowView& flow, const ActivityOptions& options = {});

// One info finding per node that has service flows, listing them.
//
// \return the findings (code "service-flows"), in node order.
std::vector<Finding> check_service_flows(const RunView& view);

}  // namespace stacksage
