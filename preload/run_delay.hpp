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

// \param tid the thread to read; 0 for the calling thread.
// \return its run delay in ns since it was created.
// \return -1 when the kernel does not expose it (no CONFIG_SCHED_INFO), the
//         file cannot be opened (no descriptor left) or its text is not the
//         kernel's three numbers. Async-signal-safe; leaves errno alone.
std::int64_t read_run_delay_ns(int tid);

// The text of a schedstat file ("<ran ns> <waited ns> <timeslices>\n").
// \return the second number; -1 when the text is not three decimal numbers.
std::int64_t parse_schedstat_run_delay(const char* text);

}  // namespace stacksage::preload
