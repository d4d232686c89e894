// Which heap blocks may be tracked: the filter free() and realloc() go
// through while tracking runs, so that freeing an untracked (small) block
// costs one load and never takes the block table's lock.
//
// A counting filter over the tracked blocks' start addresses: a counter per
// hash slot, raised when a malloc'd block enters the block table, lowered
// when free() takes it out. A zero counter: certainly not tracked. A
// non-zero one: perhaps (another tracked block shares the slot): the block
// table decides. It reads nothing of the allocator's (no chunk header), so
// it holds for glibc, jemalloc, tcmalloc or any other allocator's blocks.
// 4096 slots for at most BlockTable::kCapacity (1024) live blocks.
#pragma once

#include <atomic>
#include <cstdint>

namespace stacksage::sampling {

class TrackedBlockFilter {
public:
    static constexpr unsigned kSlotBits = 12;

    bool may_hold(const void* p) const { return counts_[slot(p)].load(std::memory_order_relaxed) != 0; }
    void add(const void* p) { counts_[slot(p)].fetch_add(1, std::memory_order_relaxed); }
    void remove(const void* p) { counts_[slot(p)].fetch_sub(1, std::memory_order_relaxed); }
    void clear() {
        for (auto& c : counts_) c.store(0, std::memory_order_relaxed);
    }

private:
    // By the page a block starts in: a large block's first page holds few
    // small blocks if any (an mmap'd glibc chunk, a jemalloc or tcmalloc
    // large extent: none; a large chunk from glibc's heap: its neighbours),
    // and the small blocks of one page, freed one after the other, find
    // the same slot in the cache. A multiplicative hash spreads the pages.
    static unsigned slot(const void* p) {
        const std::uint64_t page = reinterpret_cast<std::uint64_t>(p) >> 12;
        return static_cast<unsigned>((page * 0x9E3779B97F4A7C15ull) >> (64 - kSlotBits));
    }
    std::atomic<std::uint16_t> counts_[1u << kSlotBits] = {};
};

// The process's filter (zero at load: no constructor to wait for).
inline TrackedBlockFilter g_tracked_block_filter;

}  // namespace stacksage::sampling
