// The recorder's own threads (today: the sampler's drain thread), by kernel
// tid. They live in the application's process, so /proc/self/task lists
// them next to the application's: a thread snapshot that kept them counted
// the recorder as load (issue 17: a clean 1-rank x 2-thread run failed
// `check` with sampling on). Each registers itself from inside; snapshots
// and the exit-time measurements skip what is registered.
//
// A handful of fixed atomic slots: no lock, no allocation, async-signal-safe.
#pragma once

#include <cstddef>

namespace stacksage::preload {

// The name every recorder thread gives itself (PR_SET_NAME, at most 15
// bytes), so that a reader can tell them apart also in logs of recorders that
// wrote them into snapshots.
inline constexpr char kRecorderThreadNamePrefix[] = "stacksage";

// Whether a thread's name (its comm, len bytes) is a recorder thread's: also
// true of one its creator named that has not yet run to register itself.
inline bool has_recorder_thread_name(const char* name, std::size_t len) {
    constexpr std::size_t prefix = sizeof kRecorderThreadNamePrefix - 1;
    return len >= prefix && __builtin_memcmp(name, kRecorderThreadNamePrefix, prefix) == 0;
}

// Before the creator starts a recorder thread: until that thread has
// registered, snapshots wait for it (bounded), as its tid is not known yet.
void recorder_thread_starting();
// The creation failed: nothing will register.
void recorder_thread_start_failed();

// From inside the new recorder thread: names it `name` (prefixed by
// kRecorderThreadNamePrefix by convention) and registers its tid.
// \return false when every slot is taken (the thread is then not hidden).
bool register_this_recorder_thread(const char* name);
// From inside a recorder thread that is about to end.
void unregister_this_recorder_thread();

// Whether tid is one of the recorder's own threads. Lock-free.
bool is_recorder_thread(int tid);

// Waits, at most about 50 ms, until every recorder thread being started has
// registered. For snapshots, which are rare (MPI_Init, MPI_Finalize).
void wait_for_starting_recorder_threads();

// Whether the application has no thread left, only the recorder's: its main
// thread has ended (pthread_exit: the process's leader is a zombie) and every
// other thread of the process is a registered recorder thread. glibc ends a
// process when its last thread ends, counting every thread pthread_create
// made, the recorder's included: a recorder thread that lived on would keep
// such a process alive for ever. Asked without opening a descriptor (a
// moment's descriptor took the lowest free number, which an application that
// had just closed every descriptor then did not get): the leader has left
// when /proc/self/task/PID/cwd no longer resolves (a live thread always has
// a working directory; one that left has dropped it), and
// /proc/self/task's link count is the number of threads + 2. Where these do
// not answer, one read of /proc/self/stat; false when that cannot be read
// either (the recorder thread then lives on, as before).
bool only_recorder_threads_left();

// In a forked child: the parent's recorder threads do not exist there.
void forget_recorder_threads();

}  // namespace stacksage::preload
