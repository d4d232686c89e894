// The live watcher's judgement of one reading of a node's threads
// (preload/live_conditions.hpp): over-subscription, idle cores, throttling,
// and how long a condition has held.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "preload/live_conditions.hpp"

using namespace stacksage::preload;
using namespace stacksage::preload::live;

namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;

CpuMask mask_of(std::initializer_list<unsigned> cpus) {
    CpuMask m;
    mask_empty(m);
    for (unsigned c : cpus) mask_set(m, c);
    return m;
}

std::string list(const CpuMask& m) {
    char text[256];
    m.format_list(text, sizeof text);
    return text;
}

// A reading of threads, each a (mask index, busy?) pair; busy threads ran the
// whole interval, idle ones slept (state S).
struct Scene {
    std::vector<CpuMask> masks;
    std::vector<ThreadReading> threads;
    std::int64_t throttled = -1;

    void add(std::uint32_t mask, bool busy, int last_cpu = -1, bool runnable_only = false) {
        ThreadReading t;
        t.mask = mask;
        t.has_interval = !runnable_only;
        t.runnable = busy;
        t.ran_ns = busy && !runnable_only ? kSecond : 0;
        t.last_cpu = last_cpu;
        threads.push_back(t);
    }
    Verdict judge() const {
        NodeReading r;
        r.threads = threads.data();
        r.thread_count = threads.size();
        r.masks = masks.data();
        r.mask_count = masks.size();
        r.interval_ns = kSecond;
        r.throttled_periods = throttled;
        Verdict v;
        live::judge(r, v);
        return v;
    }
};

}  // namespace

TEST(LiveConditions, OneBusyThreadPerCpuIsClean) {
    Scene s;
    s.masks = {mask_of({0, 1, 2, 3})};
    for (int i = 0; i < 4; ++i) s.add(0, true, 0);  // all last seen on CPU 0: they still fit
    s.add(0, false);                                  // the main thread, waiting in join
    const Verdict v = s.judge();
    EXPECT_FALSE(v.oversubscribed);
    EXPECT_FALSE(v.idle);
    EXPECT_FALSE(v.throttled);
    EXPECT_EQ(v.busy_threads, 4u);
    EXPECT_EQ(list(v.allowed), "0-3");
}

TEST(LiveConditions, MoreBusyThreadsThanCpusIsOversubscription) {
    Scene s;
    s.masks = {mask_of({0, 1})};
    for (int i = 0; i < 6; ++i) s.add(0, true);
    const Verdict v = s.judge();
    EXPECT_TRUE(v.oversubscribed);
    EXPECT_EQ(list(v.crowded), "0-1");
    EXPECT_EQ(v.crowded_threads, 6u);
    EXPECT_FALSE(v.idle);
}

TEST(LiveConditions, AThreadWaitingForItsCpuIsBusyHoweverLittleItRan) {
    Scene s;
    s.masks = {mask_of({0})};
    s.add(0, true);
    ThreadReading starved;  // runnable, got a tenth of the CPU
    starved.mask = 0;
    starved.runnable = true;
    starved.has_interval = true;
    starved.ran_ns = kSecond / 10;
    s.threads.push_back(starved);
    EXPECT_TRUE(s.judge().oversubscribed);
}

TEST(LiveConditions, ABusyThreadFirstSeenNowCountsByItsState) {
    Scene s;
    s.masks = {mask_of({0})};
    s.add(0, true, -1, /*runnable_only=*/true);
    s.add(0, true, -1, /*runnable_only=*/true);
    EXPECT_TRUE(s.judge().oversubscribed);
}

TEST(LiveConditions, ThreadsCrowdedOnOneCpuLeaveTheOtherIdle) {
    // rebind_midway: two threads bound to CPU 0 of a 0-1 process.
    Scene s;
    s.masks = {mask_of({0}), mask_of({0, 1})};
    s.add(0, true);
    s.add(0, true);
    s.add(1, false);  // the main thread, free, waiting
    const Verdict v = s.judge();
    EXPECT_TRUE(v.oversubscribed);
    EXPECT_EQ(list(v.crowded), "0");
    EXPECT_EQ(v.crowded_threads, 2u);
    EXPECT_TRUE(v.idle);
    EXPECT_EQ(list(v.idle_cpus), "1");
}

TEST(LiveConditions, NarrowMasksArePlacedFirst) {
    // A free thread last seen on CPU 0 must not take the CPU the pinned one needs.
    Scene s;
    s.masks = {mask_of({0, 1}), mask_of({0})};
    s.add(0, true, 0);
    s.add(1, true, 0);
    const Verdict v = s.judge();
    EXPECT_FALSE(v.oversubscribed);
    EXPECT_FALSE(v.idle);
}

TEST(LiveConditions, CpusNoBusyThreadMayUseAreIdle) {
    Scene s;
    s.masks = {mask_of({0, 1, 2, 3, 4, 5, 6, 7})};
    s.add(0, true, 3);
    s.add(0, false);
    const Verdict v = s.judge();
    EXPECT_TRUE(v.idle);
    EXPECT_EQ(list(v.idle_cpus), "0-2,4-7");  // the busy thread is where it was seen
    EXPECT_EQ(v.busy_threads, 1u);
}

TEST(LiveConditions, DisjointRanksAreJudgedEachOnItsCpus) {
    // Rank 0 runs 3 threads on CPUs 0-1, rank 1 one thread on CPUs 2-3.
    Scene s;
    s.masks = {mask_of({0, 1}), mask_of({2, 3})};
    for (int i = 0; i < 3; ++i) s.add(0, true);
    s.add(1, true);
    const Verdict v = s.judge();
    EXPECT_TRUE(v.oversubscribed);
    EXPECT_EQ(list(v.crowded), "0-1");
    EXPECT_EQ(v.crowded_threads, 3u);
    EXPECT_TRUE(v.idle);
    EXPECT_EQ(v.idle_cpus.count(), 1u);
}

TEST(LiveConditions, ThrottlingIsGrowthOfNrThrottled) {
    Scene s;
    s.masks = {mask_of({0})};
    s.add(0, true);
    s.throttled = 0;
    EXPECT_FALSE(s.judge().throttled);
    s.throttled = 4;
    EXPECT_TRUE(s.judge().throttled);
    s.throttled = -1;  // no quota
    EXPECT_FALSE(s.judge().throttled);
}

TEST(LiveConditions, HalfTheIntervalOnACpuIsBusy) {
    ThreadReading t;
    t.has_interval = true;
    t.ran_ns = kSecond / 2;
    EXPECT_TRUE(is_busy(t, kSecond));
    t.ran_ns = kSecond / 2 - 1;
    EXPECT_FALSE(is_busy(t, kSecond));
}

TEST(LiveHoldClock, FiresOnceWhenTheConditionHeldLongEnough) {
    HoldClock c;
    const std::uint64_t hold = 5 * kSecond;
    EXPECT_FALSE(c.update(true, 0, 1 * kSecond, hold));
    EXPECT_EQ(c.since_ns(), 0u);
    for (std::uint64_t s = 2; s < 5; ++s) EXPECT_FALSE(c.update(true, (s - 1) * kSecond, s * kSecond, hold));
    EXPECT_TRUE(c.update(true, 4 * kSecond, 5 * kSecond, hold));
    EXPECT_FALSE(c.update(true, 5 * kSecond, 6 * kSecond, hold));  // once per stretch
}

TEST(LiveHoldClock, ABreakStartsAgain) {
    HoldClock c;
    const std::uint64_t hold = 3 * kSecond;
    EXPECT_FALSE(c.update(true, 0, 1 * kSecond, hold));
    EXPECT_FALSE(c.update(true, 1 * kSecond, 2 * kSecond, hold));
    EXPECT_FALSE(c.update(false, 2 * kSecond, 3 * kSecond, hold));
    EXPECT_FALSE(c.update(true, 3 * kSecond, 4 * kSecond, hold));
    EXPECT_EQ(c.since_ns(), 3 * kSecond);
    EXPECT_FALSE(c.update(true, 4 * kSecond, 5 * kSecond, hold));
    EXPECT_TRUE(c.update(true, 5 * kSecond, 6 * kSecond, hold));
}
