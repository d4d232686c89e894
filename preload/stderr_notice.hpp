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
// Only onto the standard error the process started with: descriptor 2 is
// remembered at start (its device and inode) and checked before each line.
// An application that started with it closed, or closed it since, may have
// its own file at number 2 (its first open() gets it): the line is dropped
// rather than written into the application's data.
//
// Async-signal-safe: one fstat, one atomic exchange and one write(2).
#pragma once

#include <cstddef>

namespace stacksage::preload {

// Remembers which file descriptor 2 is now (none when it is closed): the
// only file notices go to. Called first thing at the recorder's start.
void remember_stderr();

// Writes `line` (len bytes, ending in '\n') to fd 2 unless this process (or
// the parent it was forked from) already did, or fd 2 is no longer the
// standard error remembered at start. Returns true when written.
bool tell_stderr_once(const char* line, std::size_t len);

// True once this process has used its line.
bool stderr_notice_used();

// Writes `line` to the same stderr (and only while fd 2 is still that file),
// whether or not the once-line was used:
// for the live watcher's warnings (preload/live_watcher.hpp), which are the
// job's news, not the recorder's problems, and are limited per node instead.
void tell_stderr(const char* line, std::size_t len);

}  // namespace stacksage::preload
