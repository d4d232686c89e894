// Activity: which flows actually computed.
//
// MPI progress threads, PMIx and libevent helpers, OpenMP monitor threads, a
// main thread that only waits for its workers: alive for the whole run but
// nearly idle. They are service flows: listed, never enough on their own to
// make a core over-subscribed (the load checks count only the busy
// intervals of active flows).
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
    // Where a flow's wait for a CPU is unknown (logs of older recorders, a
    // kernel without schedstat): a flow under service_fraction that was
    // preempted more often than it blocked, and either never blocked or was
    // preempted at least this often per second of its lifetime, was waiting
    // for a CPU. An idle thread that ran a few bursts was preempted a few
    // times in all; a thread that never blocked was runnable all its life.
    double starved_preemptions_per_s = 10;
    // A starved compute thread uses each turn on a CPU for much of a time
    // slice; a helper that wakes for microseconds queues at each wake-up on
    // a crowded node and so may "ask for" a tenth of a CPU while hardly
    // using any. Under this CPU time per turn (schedstat's slices, else the
    // context switches + 1) a flow is starved only if it waited for a CPU
    // at least starved_wait_fraction of its awake time. Measured on 8 ranks
    // x 2 GNU OpenMP threads on 2 cores: PMIx and Open MPI helpers ran
    // 11-23 us per turn and waited 0.1-3.4 %; starved OpenMP workers ran
    // 290-2500 us per turn and waited 39-71 %. With 3 more busy processes
    // on the 2 cores the helpers ran 6-30 us per turn and waited at most
    // 12 %; 4 OpenMP workers on the 2 cores ran 137-207 us per turn and
    // waited 23-62 %, with 6 busy processes 123-546 us and 19-77 % (a
    // worker's turn ends at each barrier and at others' wake-ups). The
    // turn bound sits in the gap: a worker under it is starved only where
    // it waited a quarter of its life.
    std::int64_t starved_min_cpu_per_slice_ns = 80'000;
    double starved_wait_fraction = 0.25;
};

// Sets flow.cpu_fraction, flow.service, flow.starved and flow.busy. A flow
// whose CPU time is unknown (killed before its end was recorded) is active:
// the checks err on the side of counting it.
//
// Little CPU time alone does not make a service flow: 100 busy threads on 2
// cores each get 2 % of a CPU. What decides is the CPU a flow asked for:
// the time it ran plus the time it waited for a CPU (the kernel's run
// delay), as a fraction of its awake time (its life less the waits the
// recorder saw, pthread_join). A flow that asked for at least
// service_fraction but got less was starved: it is active, load like any
// other. Where the wait for a CPU is unknown, the context switches stand in
// for it (see starved_preemptions_per_s); where they are unknown too, CPU
// time alone decides.
//
// Activity is decided per interval, not for the whole life: flow.busy holds
// the stretches in which the flow asked for a CPU. Recorded waits are never
// busy; an awake stretch between two CPU readings (thread start, the start
// of each wait, its pthread_create calls, the end) of at least
// min_lifetime_ns is busy when its own CPU share reached service_fraction,
// or when what it asked for there did and the flow waited for a CPU (it was
// starved, or it was active and its wait passes the same turn test: on a
// crowded node an active thread's quiet stretch is a wait too); a shorter
// stretch that begins at one of its pthread_create calls, and one of any
// length from such a call to a recorded wait (the creator's join), is busy
// only when its own CPU share reached service_fraction (a creator starved
// while its new threads took the CPU did not compute beside them); other
// shorter stretches, and stretches without readings, follow the whole-life
// verdict.
// So a main thread that computes alone and then waits in pthread_join for
// one worker per core is load before the workers start, not beside them.
// A service flow is one with no busy stretch.
void classify_activity(FlowView& flow, const ActivityOptions& options = {});

// "service", "starved" or "active": a classified flow's state, as the HTML
// report and the Perfetto trace show it.
std::string_view activity_state(const FlowView& flow);

// One info finding per node that has service flows, listing them.
//
// \return the findings (code "service-flows"), in node order.
std::vector<Finding> check_service_flows(const RunView& view);

}  // namespace stacksage
