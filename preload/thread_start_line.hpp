// The thread_start line of a launch slot (thread_launch.hpp), formatted
// field by field straight into a buffer: the line every thread writes, a
// short thread on its own critical path, at its end (docs/event-log.md,
// thread_start; docs/PERFORMANCE.md, pthread_create).
//
// Byte for byte what JsonLine would build (begin_event_at, then the fields
// in the order of event_schema::thread_start), which the event-log readers
// and the fuzz seeds depend on (tests/preload/test_preload_thread_start_line.cpp
// checks it against a JsonLine build). Faster than it: the room the line can
// take is worked out once, so the keys, which are constants, and the numbers
// are written without a check each and without the comma bookkeeping.
#pragma once

#include <cstddef>

#include "preload/thread_launch.hpp"

namespace stacksage::preload {

// The most bytes the line of `l` (with its end when `ending` is given) can
// take, '\n' included.
std::size_t thread_start_line_room(const Launch& l, const ThreadEnding* ending);

// Writes the line of `l` (its start as of l.start_ns, written as thread
// l.tid of process pid; its end too when `ending` is given) at out, ending
// in '\n'. Returns its length, or 0, with nothing written, when cap is under
// thread_start_line_room().
std::size_t format_thread_start_line(char* out, std::size_t cap, const Launch& l, int pid,
                                     const ThreadEnding* ending);

}  // namespace stacksage::preload
