// Which slots of a hash table in fresh (zeroed) memory are in use, one bit
// per slot. Walking the used entries then reads the bitmap's few pages, not
// every page of the table: a read of a page nobody wrote is a page fault
// all the same, and the summary's walk of the empty slots of the per-thread
// access tables, the site table and the object table took about a thousand
// of them per process (more with every thread), a cost of the recorder in
// the application's process at its exit.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

class SlotBitmap {
public:
    static std::size_t bytes_for(std::uint32_t capacity) { return (capacity + 63u) / 64u * sizeof(std::uint64_t); }
    // `memory`: bytes_for(capacity), 8-byte aligned, zero (no slot used).
    void init_zeroed(void* memory, std::uint32_t capacity) {
        words_ = static_cast<std::atomic<std::uint64_t>*>(memory);
        word_count_ = (capacity + 63u) / 64u;
    }
    // Safe from several threads at once (the site and object tables).
    void mark(std::uint32_t slot) {
        words_[slot / 64].fetch_or(std::uint64_t{1} << (slot % 64), std::memory_order_release);
    }
    // fn(slot) for every marked slot, in slot order.
    template <class Fn> void for_each(Fn&& fn) const {
        for (std::uint32_t w = 0; w < word_count_; ++w)
            for (std::uint64_t bits = words_[w].load(std::memory_order_acquire); bits != 0; bits &= bits - 1)
                fn(w * 64 + static_cast<std::uint32_t>(__builtin_ctzll(bits)));
    }

private:
    std::atomic<std::uint64_t>* words_ = nullptr;
    std::uint32_t word_count_ = 0;
};

}  // namespace stacksage::sampling
