// The recorder's one line on the application's stderr.
//
// Whatever goes wrong inside the recorder (no output directory, no log name,
// a full disk, a removed log, a bad STACKSAGE_SAMPLE), the application's
// stderr gets at most one line from it per process: the first problem is
// said, later ones are not (they are in the event log where there is one).
// A child of fork() inherits what its parent already said and stays quiet
// too: a job that forks a thousand times after its output directory went
// away prints one line, not a thousand. An exec'ed image starts afresh.
//
// Async-signal-safe: one atomic exchange and one write(2).
#pragma once

#include <cstddef>

namespace stacksage::preload {

// Writes `line` (len bytes, ending in '\n') to fd 2 unless this process (or
// the parent it was forked from) already did. Returns true when written.
bool tell_stderr_once(const char* line, std::size_t len);

// True once this process has used its line.
bool stderr_notice_used();

// Writes `line` to the same stderr, whether or not the once-line was used:
// for the live watcher's warnings (preload/live_watcher.hpp), which are the
// job's news, not the recorder's problems, and are limited per node instead.
void tell_stderr(const char* line, std::size_t len);

}  // namespace stacksage::preload
