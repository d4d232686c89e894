// What the recording of each process misses, said next to the verdicts that
// rest on it:
//
// - log-ends-early (error): a process's log stops before its end was
//   recorded. The cause where the log shows it (ProcessView::log_ends_early):
//   killed (its file keeps the zero-filled tail every end the recorder sees
//   truncates away: SIGKILL, the OOM killer), the log stopped recording (a
//   full disk, a file-size limit: the log_stopped event gives the error), or
//   unknown. What the process did after its last event is missing: the
//   threads it was still to create, their load.
// - untraced-threads (info): threads the recorder never saw created did
//   work: glibc's own threads (timer_create and aio_* with SIGEV_THREAD run
//   the notification on a thread glibc creates without pthread_create's
//   public entry), raw clone() threads. Those alive at the end are in the
//   kernel's task list (flows marked untraced, with their CPU time); those
//   that ended before are one "unseen" flow holding the CPU time no recorded
//   thread accounts for. Both count as load in the other checks; this
//   finding says what they are.
//
// One finding per node and code, naming the processes' flows (the main thread
// for log-ends-early).
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_recording_gaps(const RunView& view);

// "the process was killed before ..." for a ProcessView::log_ends_early
// cause: what the process line of a report says too.
std::string log_ends_early_reason(std::string_view cause, std::string_view stop_error);

}  // namespace stacksage
