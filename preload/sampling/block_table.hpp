// The tracked blocks (allocations at or above STACKSAGE_OBJECT_MIN_BYTES):
// which object a sampled data address belonged to at the time of the
// sample.
//
// Samples are drained up to 200 ms after they were taken, by then a block
// may be freed and its addresses reused: a freed block is kept, with the
// time it was freed, until the table needs its slot, and a sample matches
// the block that held its address at the sample's time. Slots are reused
// round-robin among freed blocks, so the block freed longest ago goes
// first and a program that churns large buffers never finds the table full
// of dead ones. The table is a fixed array under a spin lock: only tracked
// (large) allocations and frees, and the drain, take it; free() of an
// untracked block never does (preload/allocation_events.cpp). A free looks
// from the newest block back (temporary buffers die young); the drain
// looks at the block it found last first (samples come in runs).
#pragma once

#include <atomic>
#include <cstdint>

#include "preload/sampling/spin_lock.hpp"

namespace stacksage::sampling {

class BlockTable {
public:
    static constexpr std::uint32_t kCapacity = 1024;
    static constexpr std::uint64_t kLive = ~std::uint64_t{0};

    // \return false when full (every slot holds a live block).
    bool add(std::uint64_t start, std::uint64_t bytes, std::int32_t object, std::uint64_t now_ns);
    // The live block starting at start, freed now. \return whether there was one.
    bool mark_freed(std::uint64_t start, std::uint64_t now_ns);
    // Live blocks within [start, start + bytes) (munmap), freed now. \return how many.
    std::uint32_t mark_unmapped(std::uint64_t start, std::uint64_t bytes, std::uint64_t now_ns);
    // The object of the block holding address at time_ns (0: now, any live
    // block), the latest allocated when several did; -1 when none.
    std::int32_t find(std::uint64_t address, std::uint64_t time_ns);

    std::uint32_t live() const { return live_.load(std::memory_order_relaxed); }  // a hint, without the lock
    void reset_lock() { lock_.reset(); }

private:
    struct Block {
        std::uint64_t start, end, alloc_ns, free_ns;
        std::int32_t object;  // -1: the slot is free
    };
    Block blocks_[kCapacity];
    std::uint32_t high_ = 0;    // slots ever used
    std::uint32_t cursor_ = 0;  // where the round-robin reuse looks next
    std::uint32_t newest_ = 0;  // the slot added last
    std::uint32_t last_found_ = 0;
    std::atomic<std::uint32_t> live_{0};
    SpinLock lock_;
};

}  // namespace stacksage::sampling
