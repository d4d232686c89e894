// parallel_for: one function applied to every index of a range, on several
// threads. Each call writes only the slot of its own index (a result vector
// sized beforehand), so what comes out is the same whatever the number of
// threads and however they interleave: the reports stay byte-identical.
//
// The analysis of a run is a sweep per node and a summary per process, each
// independent of the others: at a million ranks they are most of the
// analysis's time, and this spreads them over the machine's cores.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace stacksage {

// The threads work may use: `requested`, or one per core when 0 (at least 1).
inline unsigned worker_count(unsigned requested) {
    if (requested > 0) return requested;
    return std::max(1u, std::thread::hardware_concurrency());
}

// Calls body(i) for every i < count, on up to `workers` threads (the
// calling one included; 0: one per core). Indices are handed out in runs
// of consecutive ones, in turn, so a few costly indices (an over-subscribed
// node's sweep) do not hold one thread while the others wait. body(i) may
// only read what is shared and write what belongs to i. The first exception
// a call threw is rethrown once every thread has stopped; indices not yet
// handed out are then skipped.
template <class Body>
void parallel_for(std::size_t count, unsigned workers, Body&& body) {
    const std::size_t threads = std::min<std::size_t>(worker_count(workers), count);
    if (threads <= 1) {
        for (std::size_t i = 0; i < count; ++i) body(i);
        return;
    }
    // About 16 runs per thread: small enough to balance, large enough that
    // handing them out costs nothing beside the work.
    const std::size_t run = std::max<std::size_t>(1, count / (threads * 16));
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr first_error;
    std::mutex error_mutex;
    auto work = [&] {
        for (;;) {
            if (failed.load(std::memory_order_relaxed)) return;
            const std::size_t from = next.fetch_add(run, std::memory_order_relaxed);
            if (from >= count) return;
            const std::size_t to = std::min(count, from + run);
            try {
                for (std::size_t i = from; i < to; ++i) body(i);
            } catch (...) {
                std::lock_guard lock(error_mutex);
                if (!first_error) first_error = std::current_exception();
                failed.store(true, std::memory_order_relaxed);
                return;
            }
        }
    };
    std::vector<std::thread> others;
    others.reserve(threads - 1);
    try {
        for (std::size_t t = 1; t < threads; ++t) others.emplace_back(work);
    } catch (const std::system_error&) {
        // No thread to be had (a process limit): the threads started, and
        // this one, do the work.
    }
    work();
    for (std::thread& t : others) t.join();
    if (first_error) std::rethrow_exception(first_error);
}

}  // namespace stacksage
