// Threads of this process the recorder never saw created, found at its end.
//
// glibc creates threads of its own, without going through the public
// pthread_create the recorder interposes: the notification threads of
// timer_create and aio_* with SIGEV_THREAD, aio's worker threads. A raw
// clone(CLONE_THREAD) makes one too. None has a thread_start, so their work
// was invisible (issue 27: 21 threads computing, "created no threads").
// At the process's end the kernel's task list (/proc/self/task) is compared
// with the recorder's registry: each task that is neither registered, the
// main thread, nor one of the recorder's own gets a thread_usage_at_exit line
// marked "untraced", with its name, mask, CPU time and age (the kernel's
// start time). Those that ended earlier left only CPU time in the process's
// total: the reader accounts for it (parsers/run_loader.cpp, Unseen flows).
#pragma once

#include <cstdint>

namespace stacksage::preload {

// Writes the lines (at most kMaxUntracedTaskLines).
// \return the CPU time of the recorder's own threads alive now, in µs, which
//         the process's total includes and the application did not use; -1
//         when the task list cannot be read or the registry is too large to
//         compare with (nothing is written then).
std::int64_t write_usage_of_untraced_tasks();

inline constexpr int kMaxUntracedTaskLines = 256;

}  // namespace stacksage::preload
