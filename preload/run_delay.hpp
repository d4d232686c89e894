// How long a thread waited for a CPU: the scheduler's run delay, the second
// field of /proc/.../schedstat (ns spent runnable but not running).
//
// getrusage says how long a thread ran and how often it was preempted, not
// how long it waited. A thread that got 2 % of a CPU may have slept (a
// service thread) or queued behind 99 others (starved): only this tells
// them apart when the queue is long (see analysis/activity.hpp).
#pragma once

#include <cstdint>

namespace stacksage::preload {

// What schedstat says of a thread's waits for a CPU.
struct SchedWait {
    std::int64_t run_delay_ns = -1;  // time runnable but not running
    // Times it was put on a CPU. With the CPU time it tells a starved
    // compute thread (each turn a whole time slice) from a helper that wakes
    // often for microseconds and queues at each wake-up.
    std::int64_t slices = -1;
};

// \param tid the thread to read; 0 for the calling thread.
// \return its run delay in ns and its count of time slices since it was
//         created; both -1 when the kernel does not expose them (no
//         CONFIG_SCHED_INFO), the file cannot be opened (no descriptor left)
//         or its text is not the kernel's three numbers. Async-signal-safe;
//         leaves errno alone.
SchedWait read_sched_wait(int tid);

// The text of a schedstat file ("<ran ns> <waited ns> <timeslices>\n").
// \return the second and third numbers; both -1 when the text is not three
//         decimal numbers.
SchedWait parse_schedstat(const char* text);

}  // namespace stacksage::preload
