#include "preload/recorder_threads.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <atomic>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {

// The recorder starts one drain thread per process; a few spare slots.
constexpr int kSlots = 8;
constinit std::atomic<int> g_tids[kSlots] = {};
// Recorder threads created but not registered yet.
constinit std::atomic<int> g_starting{0};

// Never below 0: a thread registered without recorder_thread_starting (a
// test) must not make a later start look finished.
void one_less_starting() {
    int n = g_starting.load(std::memory_order_acquire);
    while (n > 0 && !g_starting.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {}
}

}  // namespace

void recorder_thread_starting() { g_starting.fetch_add(1, std::memory_order_acq_rel); }

void recorder_thread_start_failed() { one_less_starting(); }

bool register_this_recorder_thread(const char* name) {
    // Named before it is registered: a reader of an older log, or one that
    // races the registration, still recognises it by its name.
    raw::syscall6(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>(name));
    const int tid = raw::gettid();
    bool registered = false;
    for (auto& slot : g_tids) {
        int expected = 0;
        if (slot.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) {
            registered = true;
            break;
        }
    }
    // Also when full: a snapshot must not wait for a thread that never registers.
    one_less_starting();
    return registered;
}

void unregister_this_recorder_thread() {
    const int tid = raw::gettid();
    for (auto& slot : g_tids) {
        int expected = tid;
        if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
    }
}

bool is_recorder_thread(int tid) {
    if (tid <= 0) return false;
    for (const auto& slot : g_tids)
        if (slot.load(std::memory_order_acquire) == tid) return true;
    return false;
}

void wait_for_starting_recorder_threads() {
    for (int i = 0; i < 500 && g_starting.load(std::memory_order_acquire) > 0; ++i) {
        struct timespec pause{0, 100'000};
        raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
}

void forget_recorder_threads() {
    for (auto& slot : g_tids) slot.store(0, std::memory_order_relaxed);
    g_starting.store(0, std::memory_order_relaxed);
}

}  // namespace stacksage::preload
