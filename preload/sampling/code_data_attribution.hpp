// Code and data attribution: which call site issued each sampled access and
// which data object it touched (issue 30; docs/sample-file.md, "Code and
// data").
//
// Process-wide state, mapped once at sampler start: the call sites
// (site_table.hpp) with their stack copies, the mappings that give
// addresses a module (mapping_table.hpp), the data objects
// (object_table.hpp), the tracked blocks (block_table.hpp) and the modules'
// data symbols (static_symbols.hpp).
//
//   attribute_sample   in the drain, for each memory sample: its site and object
//   track_allocation   from the allocation interposers (preload/allocation_events.cpp),
//                      for blocks at or above the threshold: the block and its site
//   untrack_block, untrack_range   from free/realloc and munmap
//
// Nothing here allocates with malloc, blocks (the block table's lock is
// held for a scan), or raises; errno is left alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/sampling/block_table.hpp"
#include "preload/sampling/mapping_table.hpp"
#include "preload/sampling/object_table.hpp"
#include "preload/sampling/sample_record.hpp"
#include "preload/sampling/site_table.hpp"
#include "preload/sampling/static_symbols.hpp"

namespace stacksage::sampling {

struct AttributionOptions {
    bool enabled = true;
    // Bytes of user stack the kernel copies with each sample (0: none; a
    // multiple of 8). 4 KiB holds the frames of a loop a few calls below
    // main, and keeps a sample under 5 KiB in the ring.
    std::uint32_t stack_bytes = 4096;
    // Allocations at or above it are tracked. 1 MiB: NUMA placement is a
    // matter of pages, and a block under 1 MiB is under 256 pages, of which
    // the default page-fault period (64) samples at most 4; the tracking
    // cost (a short frame-pointer walk, a locked insert: 0.1-0.3 us,
    // bench/allocation_overhead.cpp) is then under 1 % of what
    // first-touching the block costs.
    std::uint64_t object_min_bytes = std::uint64_t{1} << 20;
    const char* maps_path = nullptr;  // nullptr: /proc/self/maps (tests give a file)
    const char* own_files_dir = nullptr;  // the recorder's output: its mapped files are left out
};

inline constexpr std::uint32_t kSiteCapacity = 8192;
inline constexpr std::uint32_t kStackCopies = 256;
inline constexpr std::uint32_t kObjectCapacity = 4096;

// The threshold while tracking runs, 0 otherwise: the interposers' one check.
inline std::atomic<std::uint64_t> g_tracked_min_bytes{0};

// Maps the tables and reads the mappings. \return false (attribution off)
// when there is no memory for them.
bool attribution_start(const AttributionOptions& options);
bool attribution_active();
// Stops tracking allocations (at process end, before the summary is written).
void attribution_stop_tracking();
// In a forked child: its locks may have been held by threads that are gone.
void attribution_after_fork_child();
// Forgets everything (tests).
void attribution_reset_for_tests();

// The calling thread's stack, for the frame-pointer walk of allocation
// sites (set at each sampled thread's start).
void attribution_set_thread_stack(std::uint64_t lo, std::uint64_t hi);
// The calling thread's stack bounds from pthread_getattr_np; false when unknown.
bool current_thread_stack(std::uint64_t& lo, std::uint64_t& hi);

struct SampleAttribution {
    std::int32_t site = -1;
    std::int32_t object = -1;
};

struct SampleContext {
    bool with_object = true;      // the sample has a data address
    bool time_is_monotonic = true;  // record.time is CLOCK_MONOTONIC (the blocks' clock)
    std::uint64_t stack_lo = 0, stack_hi = 0;  // the sampled thread's stack
    std::uint64_t other_stack_lo = 0, other_stack_hi = 0;  // the main thread's
    int tid = 0, other_tid = 0;
    bool may_refresh_mappings = false;  // the drain thread: may re-read /proc/self/maps
    bool stack_only = false;  // the sample only brings its site a stack copy (not counted)
};
SampleAttribution attribute_sample(const SampleRecord& record, const SampleContext& context);

// A block of bytes at p, just allocated (kind Heap or Mmap); frame: the
// interposer's own frame address (the walk starts at its return address).
// \return whether the block entered the block table.
bool track_allocation(const void* p, std::uint64_t bytes, ObjectKind kind, const void* frame);
// p was freed (the interposer calls it only for blocks its
// TrackedBlockFilter may hold). \return whether p was a live tracked block.
bool untrack_block(const void* p);
void untrack_range(const void* p, std::uint64_t bytes);

// What the summary writes.
const SiteTable& attribution_sites();
const ObjectTable& attribution_objects();
MappingTable& attribution_mappings();
std::uint64_t attribution_allocations_tracked();
std::uint64_t attribution_objects_dropped();  // allocations or samples whose object did not fit
std::uint64_t attribution_min_block_bytes();
// Re-reads the mappings (at the end, before they are written).
void attribution_refresh_mappings();

}  // namespace stacksage::sampling
