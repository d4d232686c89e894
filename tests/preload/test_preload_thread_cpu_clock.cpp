// The recorder's read of another thread's CPU time (preload/thread_cpu_clock.hpp).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>

#include "preload/thread_cpu_clock.hpp"

using namespace stacksage::preload;

namespace {
int own_tid() { return static_cast<int>(syscall(SYS_gettid)); }
}  // namespace

// One thread spins, one sleeps, both for 200 ms: read from the main thread,
// their clocks tell them apart, and agree with what each reads for itself.
TEST(ThreadCpuClock, ReadsAnotherThreadsCpuTime) {
    std::atomic<int> spinner_tid{0}, sleeper_tid{0};
    std::atomic<bool> measured{false};
    std::atomic<std::int64_t> spinner_own{-1};
    // The spinner spins until it has had 100 ms of CPU (not for 100 ms of
    // wall time: on a loaded machine that was under the 50 ms checked below),
    // giving up after 20 s.
    auto spin = [&] {
        spinner_tid = own_tid();
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (read_thread_cpu_ns(0) < 100'000'000 && std::chrono::steady_clock::now() < give_up) {
        }
        spinner_own = read_thread_cpu_ns(0);
        while (!measured.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    };
    auto sleep = [&] {
        sleeper_tid = own_tid();
        while (!measured.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    };
    std::thread a(spin), b(sleep);
    while (spinner_own.load() < 0 || sleeper_tid.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::int64_t spinner = read_thread_cpu_ns(spinner_tid);
    const std::int64_t sleeper = read_thread_cpu_ns(sleeper_tid);
    measured = true;
    a.join();
    b.join();
    EXPECT_GE(spinner, 50'000'000) << "sleeper " << sleeper;
    EXPECT_GE(spinner, spinner_own.load());
    EXPECT_LT(spinner - spinner_own.load(), 100'000'000);  // it only slept since
    EXPECT_GE(sleeper, 0);
    EXPECT_LT(sleeper, spinner / 4);
}

TEST(ThreadCpuClock, TheCallingThreadIsZeroOrItsOwnTid) {
    const std::int64_t by_zero = read_thread_cpu_ns(0);
    const std::int64_t by_tid = read_thread_cpu_ns(own_tid());
    ASSERT_GT(by_zero, 0);
    EXPECT_GE(by_tid, by_zero);
}

// An exited thread, a thread of another process, nonsense: -1, errno kept.
TEST(ThreadCpuClock, NoThreadOfThisProcessIsUnknown) {
    std::atomic<int> gone{0};
    std::thread([&] { gone = own_tid(); }).join();
    errno = 4321;
    EXPECT_EQ(read_thread_cpu_ns(gone), -1);
    if (getpid() != 1) {
        EXPECT_EQ(read_thread_cpu_ns(1), -1);  // init: another process
    }
    EXPECT_EQ(read_thread_cpu_ns(-1), -1);
    EXPECT_EQ(read_thread_cpu_ns(2'000'000'000), -1);
    EXPECT_EQ(errno, 4321);
}
