// Warnings while the job runs (docs/stacksage-run.md, "Live warnings").
//
// Every traced application process of a node enters itself in the node's
// registry (preload/node_registry.hpp); once it is multi-threaded (its first
// pthread_create, or MPI_Init) it starts one recorder thread,
// "stacksage-live", that sleeps. A process that stays single-threaded gets
// no thread of ours: a tool that needs to be single-threaded (unshare(2)
// with CLONE_NEWUSER fails in a multi-threaded process) still works, and a
// shell or compiler under `stacksage run` pays nothing. The first of them to take the registry's
// lock watches the node: once a second it reads, for every registered
// process, each thread's state, CPU time and last CPU (/proc/PID/task/TID/
// stat) and mask (sched_getaffinity), and the quota cgroup's nr_throttled,
// and judges them (preload/live_conditions.hpp). When over-subscription,
// idle cores or CPU-quota throttling has held for STACKSAGE_LIVE_HOLD
// seconds (default 5), it writes one line to stderr and a live_warning event
// to its log: what, since when, on which CPUs, the fix, and that the full
// report follows after the run; at most once per node and condition (the
// registry's "warned" bits). The others only retry the lock, once a second:
// the kernel releases it when its holder ends, and the next one takes over.
//
// At MPI_Init a rank adds up, over the node's registered ranks, their
// OMP_NUM_THREADS (1 where unset) and the CPUs their masks allow, and warns at
// once when the threads outnumber the CPUs (the over-subscription line of
// the node).
//
// The thread is one of the recorder's (never in a snapshot or a report),
// blocks every signal, takes no lock the application can hold, allocates
// nothing, and ends when only recorder threads are left (a main thread that
// left through pthread_exit must still end the process). Launchers
// (mpirun, srun, ...) take no part. STACKSAGE_LIVE=off turns it all off;
// STACKSAGE_LIVE=quiet keeps the events and drops the lines, as does
// STACKSAGE_QUIET.
#pragma once

namespace stacksage::preload {

// After the event log is open, in an application process that was exec'ed:
// reads the settings and enters the process in the node's registry.
void start_live_watcher();
// At the process's first pthread_create and at MPI_Init: starts the watcher
// thread, once (never in a forked child, nor in a launcher).
void start_live_watcher_thread_once();
// In the child of fork(), once it has its own log: enters the child in the
// registry (its parent's watcher thread does not exist there, and the child
// starts none: its parent, or another process of the node, watches it).
void live_watcher_after_fork();
// In pthread_exit: when the caller is the main thread, the watcher looks
// every 100 ms (not every second) whether it is left alone with the
// recorder's threads, so that the process ends as soon as it would have.
void live_watcher_main_thread_leaving();
// After MPI_Init or MPI_Init_thread succeeded.
void live_check_at_mpi_init();

}  // namespace stacksage::preload
