// The recorder's read of a thread's wait for a CPU (preload/run_delay.hpp).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <thread>

#include "preload/run_delay.hpp"

using namespace stacksage::preload;

TEST(RunDelay, ReadsTheSecondAndThirdOfTheKernelsThreeNumbers) {
    EXPECT_EQ(parse_schedstat("1234 5678 9\n").run_delay_ns, 5678);
    EXPECT_EQ(parse_schedstat("1234 5678 9\n").slices, 9);
    EXPECT_EQ(parse_schedstat("0 0 0").run_delay_ns, 0);
    EXPECT_EQ(parse_schedstat("1 9223372036854775807 2\n").run_delay_ns, INT64_MAX);
}

TEST(RunDelay, RefusesOtherText) {
    for (const char* bad : {"", "\n", "1 2\n", "1 2 3 4\n", "1 -2 3\n", "a b c\n", "1 2 3\nx",
                            "1 9223372036854775808 3\n", "1 99999999999999999999 3\n", " 1 2 3\n"}) {
        EXPECT_EQ(parse_schedstat(bad).run_delay_ns, -1) << '"' << bad << '"';
        EXPECT_EQ(parse_schedstat(bad).slices, -1) << '"' << bad << '"';
    }
}

TEST(RunDelay, AMissingThreadIsUnknownAndErrnoIsKept) {
    errno = 1234;
    EXPECT_EQ(read_sched_wait(2'000'000'000).run_delay_ns, -1);
    EXPECT_EQ(errno, 1234);
}

// Two threads spinning on one CPU: each waits about half the time.
TEST(RunDelay, GrowsWhileTheThreadQueuesForItsCpu) {
    if (!std::filesystem::exists("/proc/thread-self/schedstat")) GTEST_SKIP() << "the kernel has no schedstat";
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    std::atomic<bool> stop{false};
    std::int64_t before = -1, after = -1;
    auto spin = [&](bool measure) {
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        if (measure) before = read_sched_wait(0).run_delay_ns;
        const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
        while (std::chrono::steady_clock::now() < end) {
        }
        if (measure) after = read_sched_wait(0).run_delay_ns;
        else while (!stop.load()) {
        }
    };
    std::thread other(spin, false);
    std::thread measured(spin, true);
    measured.join();
    stop = true;
    other.join();
    ASSERT_GE(before, 0);
    // About 150 ms; far less only if the other thread never ran beside it.
    EXPECT_GE(after - before, 30'000'000) << "before " << before << " after " << after;
}
