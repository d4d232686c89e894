// One sampled thread's state: its events and ring, the samples aggregated
// so far, its losses, where it ran, and its PAPI counts.
//
// A slot is drained by whoever holds its lock: the process's drain thread
// while the thread runs, the thread itself as it ends, the exiting thread
// at process end. Draining decodes each record, asks the kernel for the
// NUMA node of data addresses in batches, and adds the sample to the
// slot's AccessTable (and to the raw sample file when one is open).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/sampling/access_table.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/sampling/numa_lookup.hpp"
#include "preload/sampling/papi_counters.hpp"
#include "preload/sampling/perf_events.hpp"
#include "preload/sampling/ring_reader.hpp"
#include "preload/sampling/sample_file_writer.hpp"
#include "preload/sampling/source_memo.hpp"

namespace stacksage::sampling {

enum class SlotState : int { Free = 0, Active = 1, Finished = 2 };

// Where raw samples go, shared by all slots of a process.
struct RawSampleSink {
    std::atomic<int> lock{0};
    SampleFileWriter writer;
};

struct ThreadSlot {
    // Keys now include the call site and data object: room for a few
    // hundred sites x objects x levels per thread.
    static constexpr std::uint32_t kTableCapacity = 4096;
    static constexpr std::size_t kPending = 128;
    // A record wrapping around the ring's end is copied here: a sample with
    // the largest stack copy (STACKSAGE_SAMPLE_STACK, 32 KiB) and its chain.
    static constexpr std::size_t kScratchBytes = 36 * 1024;

    std::atomic<int> state{0};  // SlotState
    std::atomic<int> lock{0};
    int tid = 0;
    std::uint64_t start_ns = 0, end_ns = 0;
    ThreadEvents events;
    AccessTable table;
    RingStats ring_stats;
    std::uint64_t decode_errors = 0;  // samples of unknown id or truncated
    std::uint64_t event_samples[kMaxThreadEvents] = {};  // samples seen per event
    // Samples the kernel counted but never delivered while the ring was
    // full: a LOST record appears only when a later sample finds room, so
    // at the end the events' own counts tell (see account_unrecorded).
    std::uint64_t unrecorded = 0;
    std::uint64_t samples = 0;        // samples aggregated (all backends)
    std::uint64_t recorder_samples = 0;  // taken in the recorder's own code or memory: dropped (recorder_image.hpp)
    std::uint32_t last_cpu = 0xffffffffu;
    std::uint64_t migrations = 0;     // consecutive cpu-clock samples on different CPUs
    PapiThreadCounters papi;
    std::uint32_t papi_cpu = 0xffffffffu;  // the CPU the PAPI counts are attributed to
    NumaLookup numa;
    SourceMemo sources;
    // The thread's stack (data objects of kind "stack"); 0, 0 when unknown.
    std::uint64_t stack_lo = 0, stack_hi = 0;
    alignas(8) unsigned char scratch[kScratchBytes];

    struct Pending {
        SampleRecord record;
        std::uint64_t key;  // packed AccessKey without its node (SourceMemo::with_node adds it)
        std::uint64_t where;  // AccessKey::where_of(site, object)
        std::uint8_t kind;  // EventKind
    };
    Pending pending[kPending];
    std::size_t pending_count = 0;

    bool try_lock() {
        int expected = 0;
        return lock.compare_exchange_strong(expected, 1, std::memory_order_acquire);
    }
    void lock_wait();  // spins with sched_yield; for the thread itself and process end
    void unlock() { lock.store(0, std::memory_order_release); }

    // Reads everything the kernel has published. Hold the lock.
    // from_drain_thread: the process's drain thread, which may re-read the
    // process's mappings when a sample lies outside all it knows.
    void drain(RawSampleSink* raw, bool from_drain_thread = false);
    // Before closing the events (drained): compares each sampling event's
    // count with the samples seen and records the difference in unrecorded.
    void account_unrecorded();
    // Samples of the stack-copy event (EventKind::PageFaultStack) the kernel
    // dropped: not accesses, so not in lost().
    std::uint64_t stack_event_lost = 0;
    // Samples that never reached us: LOST records plus unrecorded ones.
    std::uint64_t lost() const {
        return (ring_stats.lost > stack_event_lost ? ring_stats.lost - stack_event_lost : 0) + unrecorded;
    }
};

// Bytes of memory one slot needs, its table included.
std::size_t thread_slot_bytes();
// A slot in zeroed memory of thread_slot_bytes() (fresh mmap): constructs
// it and its table without touching the table's pages.
ThreadSlot* construct_thread_slot(void* zeroed_memory);

// The AccessKey a decoded sample of this kind aggregates under (node -1:
// filled in once the address's node is known).
AccessKey access_key_of(EventKind kind, const SampleRecord& record);
// Whether the node of the sample's address is worth a system call: DRAM,
// remote and unknown sources and page faults are; L1/L2/L3 hits are not.
bool needs_numa_node(EventKind kind, const AccessKey& key);

}  // namespace stacksage::sampling
