#include "preload/sampling/block_table.hpp"

namespace stacksage::sampling {

bool BlockTable::add(std::uint64_t start, std::uint64_t bytes, std::int32_t object, std::uint64_t now_ns) {
    SpinGuard guard(lock_);
    std::uint32_t slot = kCapacity;
    std::uint64_t oldest_free = kLive;
    for (std::uint32_t i = 0; i < high_; ++i) {
        const Block& b = blocks_[i];
        if (b.object < 0) {
            slot = i;
            break;
        }
        // The block freed longest ago, if long enough that no sample still
        // waiting to be drained can be in it.
        if (b.free_ns != kLive && b.free_ns + kKeepFreedNs <= now_ns && b.free_ns < oldest_free) {
            oldest_free = b.free_ns;
            slot = i;
        }
    }
    if (slot == kCapacity) {
        if (high_ == kCapacity) return false;
        slot = high_++;
    }
    blocks_[slot] = Block{start, start + bytes, now_ns, kLive, object};
    ++live_;
    return true;
}

bool BlockTable::mark_freed(std::uint64_t start, std::uint64_t now_ns) {
    SpinGuard guard(lock_);
    for (std::uint32_t i = 0; i < high_; ++i) {
        Block& b = blocks_[i];
        if (b.object >= 0 && b.start == start && b.free_ns == kLive) {
            b.free_ns = now_ns;
            --live_;
            return true;
        }
    }
    return false;
}

std::uint32_t BlockTable::mark_unmapped(std::uint64_t start, std::uint64_t bytes, std::uint64_t now_ns) {
    SpinGuard guard(lock_);
    std::uint32_t n = 0;
    for (std::uint32_t i = 0; i < high_; ++i) {
        Block& b = blocks_[i];
        if (b.object >= 0 && b.free_ns == kLive && b.start >= start && b.start < start + bytes) {
            b.free_ns = now_ns;
            --live_;
            ++n;
        }
    }
    return n;
}

std::int32_t BlockTable::find(std::uint64_t address, std::uint64_t time_ns) {
    SpinGuard guard(lock_);
    std::int32_t found = -1;
    std::uint64_t found_alloc = 0;
    for (std::uint32_t i = 0; i < high_; ++i) {
        const Block& b = blocks_[i];
        if (b.object < 0 || address < b.start || address >= b.end) continue;
        const bool held = time_ns == 0 ? b.free_ns == kLive : b.alloc_ns <= time_ns && time_ns < b.free_ns;
        if (held && (found < 0 || b.alloc_ns >= found_alloc)) {
            found = b.object;
            found_alloc = b.alloc_ns;
        }
    }
    return found;
}

}  // namespace stacksage::sampling
