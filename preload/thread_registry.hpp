// Which kernel thread id a pthread_t names, for affinity calls that target
// another thread (pthread_setaffinity_np(other, ...)). glibc offers no way
// to ask (pthread_gettid_np only arrived in glibc 2.42), so each traced
// thread registers itself when it starts and leaves when it ends.
//
// A fixed open-addressing table with atomic slots: no lock, no allocation.
// glibc reuses a pthread_t only after the previous thread with it ended, so a
// key is live at most once.
#pragma once

#include <cstdint>

namespace stacksage::preload {

// \param start_ns when the thread started (monotonic_ns), for for_each_registered_thread.
void register_thread(std::uintptr_t pthread_id, int tid, std::uint64_t start_ns);
void unregister_thread(std::uintptr_t pthread_id);
// The tid, or -1 when the thread is not known (not started by us, or ended).
int find_thread_tid(std::uintptr_t pthread_id);

// Calls visit(tid, start_ns, context) for every thread registered now: those
// the recorder started that have not ended. Lock-free and async-signal-safe
// (it walks the whole table: tens of microseconds, meant for the exit path).
// A thread that starts or ends during the walk may be seen or not.
void for_each_registered_thread(void (*visit)(int tid, std::uint64_t start_ns, void* context), void* context);

}  // namespace stacksage::preload
