// The process's sampler: what the preload calls.
//
//   sampler_start        once, at process start (the main thread is sampled from then on)
//   sampler_thread_begin in each new thread, before the application's start routine
//   sampler_thread_end   in each thread as it ends
//   sampler_after_fork_child   in the child of fork()
//   sampler_finish       at process end: drains everything and writes
//                        <dir>/<stem>.samples.jsonl (docs/sample-file.md)
//
// Rings are drained by a thread of ours (started through the function the
// caller passes: the preload's real pthread_create, so it is not traced)
// that sleeps in poll() until a ring is half full or 200 ms pass; the
// application's threads never wait for it. Every entry point preserves
// errno, raises nothing and allocates only with mmap, outside the sampling
// hot path (one mapping per thread, at its start).
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "preload/sampling/sampling_options.hpp"
#include "preload/sampling/sampling_plan.hpp"
#include "preload/sampling/thread_slot.hpp"

namespace stacksage::sampling {

using StartThreadFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);

struct SamplerConfig {
    SamplingOptions options;
    // Starts the drain thread; nullptr: rings are drained only by
    // sampler_drain_all and at thread and process end (tests).
    StartThreadFn start_thread = nullptr;
    // Where the raw sample file goes when options.raw_file (opened at start).
    const char* raw_file_path = nullptr;
    int pid = 0;
    const char* host = "";
    std::uint64_t start_monotonic_ns = 0, start_realtime_ns = 0;
    // The process's mappings (code and data attribution); nullptr: /proc/self/maps.
    const char* maps_path = nullptr;
    // The recorder's output directory: files mapped from it are its own.
    const char* own_files_dir = nullptr;
};

inline constexpr std::size_t kMaxSampledThreads = 4096;

// Plans the backends (sysfs, kernel settings, PAPI probe) and, when any
// requested one is usable, starts sampling the calling thread.
// \return true when sampling runs. message then lists what runs and why the
//         rest does not; on false it says why nothing runs (empty when
//         sampling is simply off).
bool sampler_start(const SamplerConfig& config, char* message, std::size_t message_cap);
bool sampler_active();

void sampler_thread_begin();
void sampler_thread_end();
// Drains every running thread's ring now (tests, and sampler_finish).
void sampler_drain_all();
void sampler_after_fork_child();

// \return false with a message when the summary cannot be written.
bool sampler_finish(const char* dir, const char* stem, char* error, std::size_t error_cap);

// For tests and the summary: the plan, and the slots of sampled threads.
const SamplingPlan& sampler_plan();
std::uint32_t sampler_usable_backends();
std::size_t sampler_slot_count();
const ThreadSlot* sampler_slot(std::size_t i);  // nullptr while being set up
const PapiCounters& sampler_papi();
// Per backend: threads whose events opened, and threads where the kernel refused them.
std::uint64_t sampler_threads_opened(Backend b);
std::uint64_t sampler_threads_failed(Backend b);
const char* sampler_first_error(Backend b);  // "" when none
std::uint64_t sampler_unsampled_threads();
// Forgets everything (tests run several samplers in one process). Only
// when no sampled thread is running.
void sampler_reset_for_tests();

}  // namespace stacksage::sampling
