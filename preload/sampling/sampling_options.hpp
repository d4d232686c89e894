// What the user chose for sampling, with the defaults that keep overhead
// low, and how the preload reads it from its environment.
//
//   STACKSAGE_SAMPLE          off | auto | pebs,ibs,pagefault,cpuclock,papi
//   STACKSAGE_SAMPLE_PERIOD_PEBS, _IBS, _PAGEFAULT, _CPUCLOCK   sample periods
//   STACKSAGE_SAMPLE_LDLAT    PEBS load-latency threshold in cycles
//   STACKSAGE_SAMPLE_PAGES    ring-buffer data pages per thread (a power of two)
//   STACKSAGE_SAMPLE_RAW      1: also write every sample to <log stem>.samples.bin
//   STACKSAGE_SAMPLE_ATTRIBUTION  0: no call sites or data objects (docs/sample-file.md, "Code and data")
//   STACKSAGE_SAMPLE_STACK    bytes of user stack copied with each memory sample (0: none)
//   STACKSAGE_OBJECT_MIN_BYTES  allocations at or above it are tracked as data objects
//   STACKSAGE_SAMPLE_SYSFS, STACKSAGE_SAMPLE_PROC   roots to read PMUs and kernel settings from (tests)
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/sampling/backend.hpp"

namespace stacksage::sampling {

struct SamplingOptions {
    BackendSelection selection{};
    // Periods: events between samples. Primes, so that a sample does not
    // keep landing on the same instruction of a loop whose trip is a round
    // number.
    std::uint64_t pebs_period = 2003;        // retired loads/stores above ldlat
    std::uint64_t ibs_period = 0x10000;      // dispatched ops; the kernel ignores the low 4 bits
    // Every 64th page fault: one sample per 256 KiB first-touched. Every
    // fault (period 1) costs a memory-bound program about a third more
    // time (docs/PERFORMANCE.md, "Sampling"); 64 keeps it within noise and
    // still shows where each thread's pages went.
    std::uint64_t pagefault_period = 64;
    std::uint64_t cpuclock_period_ns = 1000000;  // 1 ms of CPU time
    std::uint32_t ldlat_cycles = 30;         // only loads slower than this (L1 hits would drown the rest)
    std::uint32_t ring_data_pages = 16;      // per thread, all events share it; power of two
    bool raw_file = false;
    // Code and data attribution (code_data_attribution.hpp, where the
    // defaults are explained): call chains, stack copies, tracked blocks.
    bool attribution = true;
    std::uint32_t stack_bytes = 4096;             // a multiple of 8, at most 32 KiB
    std::uint64_t object_min_bytes = 1u << 20;
    const char* sysfs_root = nullptr;        // nullptr: the real ones
    const char* proc_root = nullptr;
};

// Fills options from the environment (getenv: call it at initialisation,
// not from a signal handler).
// \return false with a message naming the variable when one is malformed;
//         options then hold the defaults for that variable.
bool options_from_environment(SamplingOptions& options, char* error, std::size_t error_cap);

}  // namespace stacksage::sampling
