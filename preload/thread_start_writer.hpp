// The start-line writer: a recorder thread of the process ("stacksage-start")
// that writes the thread_start line of every thread that has lived 1 ms
// without its start being written (thread_launch.hpp), so that a thread that
// lives on is in the log however the process ends, SIGKILL included.
//
// It runs only while threads start: it sleeps until the oldest pending start
// is 1 ms old, then looks once a millisecond for 20 ms after the last one it
// saw (a program that creates threads in a loop never has to wake it), then
// sleeps on a futex that the next start wakes (one system call, paid only
// after such a pause). Like the live watcher's, its thread is started by the
// first pthread_create and leaves when only recorder threads are left.
#pragma once

namespace stacksage::preload {

// From pthread_create: starts the writer's thread the first time.
void start_start_writer_once();
// After a start became pending: one load, and a futex wake when the writer
// sleeps for longer than a start may wait.
void wake_start_writer();
// From pthread_exit: when the main thread leaves, the writer looks every
// 100 ms, not every second, whether it is the last thread left (glibc ends
// such a process only when its last thread, the writer's included, ends).
void start_writer_main_thread_leaving();
// From a thread's end: once the main thread has left, this may be the
// application's last thread, so the writer looks at once (one load else).
void start_writer_thread_ending();
// In a forked child: the parent's writer is not there.
void forget_start_writer();

}  // namespace stacksage::preload
