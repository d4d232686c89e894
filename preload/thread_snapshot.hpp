// A snapshot of every thread of the process with the CPUs it may run on,
// read from /proc/self/task with raw system calls: it also sees threads the
// recorder did not create (MPI progress threads started before our
// constructor, threads made with clone directly). The recorder's own threads
// (recorder_threads.hpp) are left out.
#pragma once

#include "preload/json_line.hpp"

namespace stacksage::preload {

// Adds "threads": [{"tid":..,"name":..,"cpuset":..}, ...] to the line.
void add_thread_snapshot(JsonLine& line);

}  // namespace stacksage::preload
