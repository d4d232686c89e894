// Activity: which flows actually computed.
//
// MPI progress threads, PMIx and libevent helpers, OpenMP monitor threads, a
// main thread that only waits for its workers: alive for the whole run but
// nearly idle. They are service flows: listed, never enough on their own to
// make a core over-subscribed (the load checks count only active flows).
#pragma once

#include <cstdint>
#include <string_view>
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
    // A flow under service_fraction that was preempted at least this often
    // per second of its lifetime, and more often than it blocked, was
    // waiting for a CPU: it is starved, not a service flow. A thread that
    // gets under 10 % of a CPU shares it with ten or more others, and the
    // scheduler preempts each every few milliseconds of its turn (some 30
    // times a second); an idle thread that ran a few bursts was preempted
    // a few times in all.
    double starved_preemptions_per_s = 10;
};

// Sets flow.cpu_fraction, flow.service and flow.starved. A flow whose CPU
// time is unknown (killed before its end was recorded) is active: the checks
// err on the side of counting it.
//
// Little CPU time alone does not make a service flow: 32 busy threads on 2
// cores each get 6 % of a CPU. A flow that was preempted often, and more
// often than it blocked (involuntary context switches above voluntary ones),
// was waiting for a CPU, not idle: it is starved, and active. Where the
// switches are unknown, CPU time alone decides.
void classify_activity(FlowView& flow, const ActivityOptions& options = {});

// "service", "starved" or "active": a classified flow's state, as the HTML
// report and the Perfetto trace show it.
std::string_view activity_state(const FlowView& flow);

// One info finding per node that has service flows, listing them.
//
// \return the findings (code "service-flows"), in node order.
std::vector<Finding> check_service_flows(const RunView& view);

}  // namespace stacksage
