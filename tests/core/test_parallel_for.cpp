// parallel_for: every index once, whatever the threads; the calling thread
// alone for one worker; an exception of one call reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/parallel_for.hpp"

using namespace stacksage;

TEST(ParallelFor, CallsEveryIndexOnceForAnyNumberOfWorkers) {
    for (std::size_t count : {0u, 1u, 7u, 1000u, 4097u})
        for (unsigned workers : {0u, 1u, 2u, 3u, 8u}) {
            std::vector<std::atomic<int>> calls(count);
            parallel_for(count, workers, [&](std::size_t i) { calls[i].fetch_add(1); });
            for (std::size_t i = 0; i < count; ++i)
                ASSERT_EQ(calls[i].load(), 1) << "index " << i << " of " << count << ", " << workers << " workers";
        }
}

TEST(ParallelFor, SeveralWorkersShareTheWork) {
    std::vector<std::thread::id> who(256);
    // Each call waits until calls on two threads have started: one thread
    // alone would never get past its first (the deadline ends the wait).
    std::mutex mutex;
    std::set<std::thread::id> started;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    parallel_for(who.size(), 2, [&](std::size_t i) {
        who[i] = std::this_thread::get_id();
        {
            std::lock_guard lock(mutex);
            started.insert(who[i]);
        }
        for (;;) {
            {
                std::lock_guard lock(mutex);
                if (started.size() >= 2) break;
            }
            if (std::chrono::steady_clock::now() > deadline) break;
            std::this_thread::yield();
        }
    });
    EXPECT_EQ(std::set<std::thread::id>(who.begin(), who.end()).size(), 2u);
}

TEST(ParallelFor, OneWorkerRunsInOrderOnTheCallingThread) {
    std::vector<std::size_t> order;
    const std::thread::id caller = std::this_thread::get_id();
    parallel_for(50, 1, [&](std::size_t i) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
        order.push_back(i);
    });
    ASSERT_EQ(order.size(), 50u);
    for (std::size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
}

TEST(ParallelFor, AnExceptionReachesTheCallerAfterEveryThreadStopped) {
    for (unsigned workers : {1u, 4u}) {
        std::atomic<int> running{0};
        EXPECT_THROW(parallel_for(1000, workers,
                                  [&](std::size_t i) {
                                      ++running;
                                      if (i == 500) {
                                          --running;
                                          throw std::runtime_error("index 500");
                                      }
                                      --running;
                                  }),
                     std::runtime_error);
        EXPECT_EQ(running.load(), 0) << "no call still running once parallel_for returned";
    }
}
