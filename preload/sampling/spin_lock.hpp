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
    // lock(), but gives up after max_yields yields of the CPU: for the
    // interposers, which must never hang (a forked child whose parent's
    // thread held it, before the child resets it). \return whether it holds it.
    bool lock_for(unsigned max_yields) {
        unsigned spins = 0, yields = 0;
        while (!try_lock()) {
            while (held_.load(std::memory_order_relaxed)) {
                if (++spins > 1000) {
                    if (++yields > max_yields) return false;
                    sched_yield();
                    spins = 0;
                }
                cpu_relax();
            }
        }
        return true;
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

// A SpinGuard that may give up (SpinLock::lock_for): check held().
class BoundedSpinGuard {
public:
    BoundedSpinGuard(SpinLock& l, unsigned max_yields) : l_(l), held_(l.lock_for(max_yields)) {}
    ~BoundedSpinGuard() {
        if (held_) l_.unlock();
    }
    bool held() const { return held_; }
    BoundedSpinGuard(const BoundedSpinGuard&) = delete;
    BoundedSpinGuard& operator=(const BoundedSpinGuard&) = delete;

private:
    SpinLock& l_;
    bool held_;
};

}  // namespace stacksage::sampling
