// Another thread's CPU time, read through its CPU-time clock.
//
// getrusage(RUSAGE_THREAD) answers only for the calling thread, so a thread
// still alive when the process exits (an OpenMP pool that is never joined, a
// detached helper) would carry no CPU time: the analyzer counted it as load.
// The kernel gives every thread a CPU-time clock (what
// pthread_getcpuclockid returns) that any thread of the same process may
// read: one system call, about 1.5 us, no procfs file.
#pragma once

#include <cstdint>

namespace stacksage::preload {

// \param tid a thread of the calling process; 0 for the calling thread.
// \return its CPU time (user + system) in ns.
// \return -1 when tid names no thread of this process (it has exited, or it
//         is a thread of the parent in a forked child). Async-signal-safe;
//         leaves errno alone.
std::int64_t read_thread_cpu_ns(int tid);

}  // namespace stacksage::preload
