#include "preload/thread_start_writer.hpp"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdint>

#include "preload/real_functions.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/thread_launch.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

constexpr char kThreadName[] = "stacksage-start";
// After the last pending start, it looks this long once a millisecond before
// it sleeps on the futex: creations in a loop do not pay a wake-up each.
constexpr std::uint64_t kLookingNs = 20'000'000;
// Its sleep on the futex ends this often, to leave with the application's
// last thread (recorder_threads.hpp, only_recorder_threads_left): every
// second, every 100 ms once the main thread has left.
constexpr long kSleepNs = 1'000'000'000;
constexpr long kSleepNsOnceMainLeft = 100'000'000;
constinit std::atomic<bool> g_main_thread_left{false};

enum : int { kNotStarted = 0, kRunning = 1, kFailed = 2 };
constinit std::atomic<int> g_state{kNotStarted};
// 1 while the writer sleeps on the futex; whoever sets it to 0 wakes it.
constinit std::atomic<int> g_asleep{0};

void nap(std::uint64_t ns) {
    struct timespec pause{static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
    raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
}

// Sleeps until woken or kSleepSeconds; true when woken (or the word changed).
bool sleep_until_woken() {
    const long ns = g_main_thread_left.load(std::memory_order_relaxed) ? kSleepNsOnceMainLeft : kSleepNs;
    struct timespec limit{ns / 1'000'000'000, ns % 1'000'000'000};
    const long rc = raw::syscall6(SYS_futex, reinterpret_cast<long>(&g_asleep), FUTEX_WAIT_PRIVATE, 1,
                                  reinterpret_cast<long>(&limit), 0, 0);
    return rc != -ETIMEDOUT;
}

void* write_loop(void*) {
    // Signals meant for the application must never land here.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    register_this_recorder_thread(kThreadName);
    ++this_thread().depth;  // anything interposed passes straight through
    std::uint64_t last_seen = monotonic_ns();
    for (;;) {
        const std::uint64_t now = monotonic_ns();
        const std::uint64_t earliest = write_pending_starts(now - kStartLineDelayNs, /*may_lock=*/true);
        if (earliest != 0) {  // left because younger than 1 ms: back when the oldest is that old
            last_seen = now;
            nap(earliest + kStartLineDelayNs > now ? earliest + kStartLineDelayNs - now : 0);
            continue;
        }
        // Once the main thread has left, each look also asks whether the
        // application has any thread left (one read of /proc/self/stat).
        if (g_main_thread_left.load(std::memory_order_relaxed) && only_recorder_threads_left()) break;
        if (now - last_seen < kLookingNs) {
            nap(kStartLineDelayNs);
            continue;
        }
        g_asleep.store(1, std::memory_order_seq_cst);
        std::atomic_thread_fence(std::memory_order_seq_cst);
        bool woken = true;
        if (!any_start_pending()) woken = sleep_until_woken();
        g_asleep.store(0, std::memory_order_relaxed);
        if (!woken && only_recorder_threads_left()) break;
        last_seen = monotonic_ns();
    }
    g_state.store(kNotStarted, std::memory_order_relaxed);
    --this_thread().depth;
    unregister_this_recorder_thread();
    return nullptr;
}

}  // namespace

void start_start_writer_once() {
    if (g_state.load(std::memory_order_relaxed) != kNotStarted) return;
    int expected = kNotStarted;
    if (!g_state.compare_exchange_strong(expected, kRunning)) return;
    RecorderScope scope;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // Named here, before it runs, as the live watcher: snapshots leave out
    // threads of the recorder's name without waiting for them to register.
    pthread_t thread;
    if (real::pthread_create()(&thread, &attr, &write_loop, nullptr) == 0) {
        if (auto setname = real::pthread_setname_np()) setname(thread, kThreadName);
    } else {
        // No writer: starts are written by the threads' ends and the
        // process's other lines; a creation that failed here is not retried.
        g_state.store(kFailed, std::memory_order_relaxed);
    }
    pthread_attr_destroy(&attr);
}

void wake_start_writer() {
    // seq_cst, after the seq_cst bit set of the pending start: the writer
    // (seq_cst store, fence, then its look at the bits) sees the start or
    // is seen asleep here.
    if (g_asleep.load(std::memory_order_seq_cst) == 0 || g_asleep.exchange(0) == 0) return;
    raw::syscall6(SYS_futex, reinterpret_cast<long>(&g_asleep), FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

void start_writer_main_thread_leaving() {
    if (raw::gettid() != process().pid) return;
    g_main_thread_left.store(true, std::memory_order_relaxed);
    wake_start_writer();
}

void start_writer_thread_ending() {
    if (g_main_thread_left.load(std::memory_order_relaxed)) wake_start_writer();
}

void forget_start_writer() {
    g_main_thread_left.store(false, std::memory_order_relaxed);
    g_state.store(kNotStarted, std::memory_order_relaxed);
    g_asleep.store(0, std::memory_order_relaxed);
}

}  // namespace stacksage::preload
