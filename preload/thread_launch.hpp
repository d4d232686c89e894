// What pthread_create hands to the new thread, and that thread's start until
// its thread_start line is written (docs/event-log.md, thread_start).
//
// The new thread does not format its start line as it starts (about 0.4 us
// of a 10 us create+join: docs/PERFORMANCE.md): it stores its own fields in
// its launch slot, which is then "pending". The line is written by whoever
// comes first:
// - the thread's own end, when it ends within 1 ms of its start: one line,
//   its thread_start carrying the end's fields (it then has no thread_end);
// - the start-line writer, a recorder thread that writes every start once it
//   is 1 ms old (thread_start_writer.cpp): a thread that lives on is in the
//   log, SIGKILL or not;
// - any other line of the process first (begin_line): a line that names a
//   thread (an affinity change, a name, a snapshot, the exit's usage lines)
//   always comes after that thread's start, and an exec or an exit loses none.
// A slot is claimed by one atomic compare-and-swap, so exactly one of them
// writes each start.
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/cpu_mask.hpp"

namespace stacksage::preload {

struct Module;

// Laid out for the caches: the slot passes from the creating core to the
// new thread's, and back to the creator for the next creation. What both
// write and read is in two cache lines: the creator's fields in the first;
// the new thread's, the start mask's small fields and its first words in the
// second. The attributes' mask, rare, is last and touched only when given.
struct alignas(64) Launch {
    std::atomic<std::uint64_t> state{0};  // its use and its state (thread_launch.cpp)
    // Filled by the creator.
    void* (*start)(void*) = nullptr;
    void* arg = nullptr;
    const Module* creator = nullptr;
    const Module* start_module = nullptr;
    std::uint64_t create_ns = 0;
    std::int64_t creator_cpu_ns = -1;  // the creator's CPU time at create_ns; -1: not read
    int creator_tid = 0;
    // The generation start_mask is valid at (known_mask.hpp).
    std::uint32_t mask_generation = 0;
    // Filled by the new thread as it starts.
    std::atomic<std::uint64_t> start_ns{0};  // read by other threads before they claim the slot
    std::uintptr_t pthread = 0;
    int tid = 0;
    std::uint32_t seq = 0;
    int start_cpu = -1;
    bool attr_mask_given = false;  // by the creator: attr_mask holds the attributes' mask
    // Without attr_mask: the creator's mask, which the new thread inherits,
    // valid at mask_generation. The new thread replaces it with the one it
    // read when that was needed: the mask it started with.
    CpuMask start_mask;
    CpuMask attr_mask;  // meaningful only when attr_mask_given
};

// The creator's part. nullptr when every slot is taken by a creation under
// way or a start not yet written: that creation runs untraced.
Launch* acquire_launch();
// The creation failed: the slot is free again.
void release_launch(Launch* l);

// The new thread's part, once its fields are stored: its start is pending.
// Returns the slot's use, which the thread's end names (below).
std::uint64_t set_start_pending(Launch& l);

// How a thread ended, for its own end (below).
struct ThreadEnding {
    const char* how = nullptr;  // one of our literals: "return", "cancel", "pthread_exit"
    std::uint64_t end_ns = 0;
    int cpu = -1;  // the CPU it ended on
};
// At the thread's end. Returns true when its start was written here together
// with its end (it ended within 1 ms and nobody had written its start): then
// it has no thread_end to write. Otherwise its start line is in the log when
// this returns (written now, or by another thread, which is waited for).
// \param use what set_start_pending returned: once its start is written by
//        another, the slot may serve the next creation.
bool write_start_at_end(Launch& l, std::uint64_t use, const ThreadEnding& ending);

// Writes every pending start that began at or before `started_by` (a
// monotonic_ns time; ~0 for all). may_lock: false where a lock must not be
// taken (a signal handler may be the caller): a start whose line does not fit
// a small stack buffer is then left pending for another writer. Returns the
// earliest start of those left pending, 0 when none is.
std::uint64_t write_pending_starts(std::uint64_t started_by, bool may_lock);

// Whether any start is pending: one cache line of loads.
bool any_start_pending();

// Before any line other than a thread's own start and end lines: the starts
// it may name come first. Async-signal-safe.
inline void write_pending_starts_first() {
    if (any_start_pending()) [[unlikely]]
        write_pending_starts(~std::uint64_t{0}, /*may_lock=*/false);
}

// For the exit's walk of the kernel's task list (untraced_tasks.cpp), where
// a thread pthread_create has just cloned shows before it registers itself:
// whether a creation is under way (a slot its creator filled, whose thread
// has not yet stored its start), and whether the thread `tid` has stored a
// start that is pending.
bool creation_under_way();
bool start_pending_for(int tid);

// In a forked child: the parent's threads are not there.
void forget_pending_starts();

// Once process_end is written: no start is written after it (the log ends
// there; event_log.hpp, seal_for_end).
void close_pending_starts();

// A thread ending within this long of its start writes its start and end in
// one line; the start-line writer writes the starts of threads older.
inline constexpr std::uint64_t kStartLineDelayNs = 1'000'000;

}  // namespace stacksage::preload
