// What the live watcher decides from one second of a node's threads: whether
// the job's busy threads are more than the CPUs their masks allow
// (over-subscribed), whether CPUs of the job's allowed set have no busy
// thread (idle cores), whether the cgroup's CPU quota held the job back
// (throttled); and for how long each has held.
//
// A thread is busy when it is runnable at the reading (state R: running, or
// waiting for a CPU) or ran at least half of the interval: a thread that
// waits for a CPU it shares is busy, however little it got. Busy threads are
// given CPUs greedily, those with the narrowest masks first, each preferring
// the CPU it was last seen on (exact for the nested or disjoint masks that
// binding produces): a busy thread left without a CPU means over-subscription
// on its mask's CPUs; a CPU of the allowed set left without a thread is idle.
//
// Pure functions of their inputs, no system calls: unit-tested apart from
// the /proc readings (tests/preload/test_preload_live_conditions.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/cpu_mask.hpp"

namespace stacksage::preload::live {

// A reading holds at most this many threads (more are left out of it).
inline constexpr std::size_t kMaxThreads = 4096;

// One thread of the job at a reading.
struct ThreadReading {
    std::uint32_t mask = 0;        // index into the distinct masks
    bool runnable = false;         // state R
    std::uint64_t ran_ns = 0;      // CPU time in the interval
    bool has_interval = false;     // false for a thread first seen now (ran_ns unknown)
    int last_cpu = -1;             // the CPU it was last on; -1: unknown
};

struct NodeReading {
    const ThreadReading* threads = nullptr;
    std::size_t thread_count = 0;
    const CpuMask* masks = nullptr;  // distinct masks, each valid
    std::size_t mask_count = 0;
    std::uint64_t interval_ns = 0;
    std::int64_t throttled_periods = -1;  // nr_throttled's growth in the interval; -1: no quota
};

// What one reading shows.
struct Verdict {
    // Over-subscription: the busy threads whose masks lie within `crowded`
    // (the masks of the threads that got no CPU), and how many CPUs that is.
    bool oversubscribed = false;
    CpuMask crowded;
    unsigned crowded_threads = 0;
    // Idle cores: CPUs of the allowed set (the union of every watched
    // thread's mask) with no busy thread.
    bool idle = false;
    CpuMask idle_cpus;
    CpuMask allowed;
    unsigned busy_threads = 0;
    bool throttled = false;
};

bool is_busy(const ThreadReading& t, std::uint64_t interval_ns);
void judge(const NodeReading& reading, Verdict& out);

// How long a condition has held: since the start of the first interval in a
// row that showed it.
class HoldClock {
public:
    // One reading over [interval_start_ns, now_ns]. True once, when the
    // condition has held for hold_ns without a break.
    bool update(bool holds, std::uint64_t interval_start_ns, std::uint64_t now_ns, std::uint64_t hold_ns);
    std::uint64_t since_ns() const { return since_ns_; }
    bool holding() const { return holding_; }

private:
    bool holding_ = false;
    bool fired_ = false;  // already said for this stretch
    std::uint64_t since_ns_ = 0;
};

// Small mask operations the judge needs (words beyond used_words are 0).
void mask_or(CpuMask& into, const CpuMask& other);
bool mask_subset(const CpuMask& inner, const CpuMask& outer);
bool mask_has(const CpuMask& m, unsigned cpu);
void mask_set(CpuMask& m, unsigned cpu);
void mask_empty(CpuMask& m);  // valid, no CPU

}  // namespace stacksage::preload::live
