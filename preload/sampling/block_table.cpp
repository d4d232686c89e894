#include "preload/sampling/block_table.hpp"

namespace stacksage::sampling {

namespace {
// The lock is held for a scan of 1024 blocks at most; a holder that never
// lets go is a thread that no longer exists (a forked child before its
// reset): after this many yields the operation is skipped, never hung.
constexpr unsigned kMaxYields = 10000;
}  // namespace

bool BlockTable::add(std::uint64_t start, std::uint64_t bytes, std::int32_t object, std::uint64_t now_ns) {
    BoundedSpinGuard guard(lock_, kMaxYields);
    if (!guard.held()) return false;
    std::uint32_t slot = kCapacity;
    if (high_ < kCapacity) {
        slot = high_++;
    } else {
        for (std::uint32_t n = 0; n < kCapacity; ++n) {
            const std::uint32_t i = cursor_;
            cursor_ = (cursor_ + 1) % kCapacity;
            if (blocks_[i].free_ns != kLive) {
                slot = i;
                break;
            }
        }
        if (slot == kCapacity) return false;
    }
    blocks_[slot] = Block{start, start + bytes, now_ns, kLive, object};
    newest_ = slot;
    live_.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool BlockTable::mark_freed(std::uint64_t start, std::uint64_t now_ns) {
    BoundedSpinGuard guard(lock_, kMaxYields);
    if (!guard.held()) return false;
    for (std::uint32_t n = 0, i = newest_; n < high_; ++n, i = i == 0 ? high_ - 1 : i - 1) {
        Block& b = blocks_[i];
        if (b.start == start && b.free_ns == kLive && b.object >= 0) {
            b.free_ns = now_ns;
            live_.fetch_sub(1, std::memory_order_relaxed);
            return true;
        }
    }
    return false;
}

std::uint32_t BlockTable::mark_unmapped(std::uint64_t start, std::uint64_t bytes, std::uint64_t now_ns) {
    BoundedSpinGuard guard(lock_, kMaxYields);
    if (!guard.held()) return 0;
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < high_; ++i) {
        Block& b = blocks_[i];
        if (b.object >= 0 && b.free_ns == kLive && b.start >= start && b.start < start + bytes) {
            b.free_ns = now_ns;
            live_.fetch_sub(1, std::memory_order_relaxed);
            ++n;
        }
    }
    return n;
}

std::int32_t BlockTable::find(std::uint64_t address, std::uint64_t time_ns) {
    BoundedSpinGuard guard(lock_, kMaxYields);
    if (!guard.held()) return -1;
    const auto held = [&](const Block& b) {
        if (b.object < 0 || address < b.start || address >= b.end) return false;
        return time_ns == 0 ? b.free_ns == kLive : b.alloc_ns <= time_ns && time_ns < b.free_ns;
    };
    // The block of the previous sample, unless a later one holds the address too.
    std::int32_t found = -1;
    std::uint64_t found_alloc = 0;
    if (last_found_ < high_ && held(blocks_[last_found_]) && blocks_[last_found_].free_ns == kLive && time_ns != 0) {
        // A live block that held the address at time_ns is the latest one to.
        return blocks_[last_found_].object;
    }
    for (std::uint32_t i = 0; i < high_; ++i) {
        const Block& b = blocks_[i];
        if (held(b) && (found < 0 || b.alloc_ns >= found_alloc)) {
            found = b.object;
            found_alloc = b.alloc_ns;
            last_found_ = i;
        }
    }
    return found;
}

}  // namespace stacksage::sampling
