// A lock held for a few hundred instructions at most (the recorder's
// process-wide tables of tracked blocks and mappings): spinning costs less
// than a futex, and the recorder may not use pthread mutexes, which a
// forked child could inherit held. After fork, the child resets it.
#pragma once

#include <sched.h>

#include <atomic>

namespace stacksage::sampling {

class SpinLock {
public:
    bool try_lock() { return !held_.exchange(true, std::memory_order_acquire); }
    void lock() {
        for (unsigned spins = 0; !try_lock(); ++spins) {
            while (held_.load(std::memory_order_relaxed)) {
                if (++spins > 1000) {
                    sched_yield();
                    spins = 0;
                }
                cpu_relax();
            }
        }
    }
    void unlock() { held_.store(false, std::memory_order_release); }
    // In a forked child, whose other threads (one may have held it) are gone.
    void reset() { held_.store(false, std::memory_order_relaxed); }

private:
    static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    std::atomic<bool> held_{false};
};

class SpinGuard {
public:
    explicit SpinGuard(SpinLock& l) : l_(l) { l_.lock(); }
    ~SpinGuard() { l_.unlock(); }
    SpinGuard(const SpinGuard&) = delete;
    SpinGuard& operator=(const SpinGuard&) = delete;

private:
    SpinLock& l_;
};

}  // namespace stacksage::sampling
