// The process's call sites: where sampled accesses and tracked allocations
// were issued, keyed by the instruction address and the call path the
// recorder could see (docs/sample-file.md, "Code and data": `site` records).
//
// One table per process, in memory mapped once at start (untouched pages
// cost nothing), shared by every thread that drains samples and every
// thread that allocates a tracked block: entries are claimed lock-free by a
// compare-and-swap of the key's 64-bit hash, and a site's id is its slot.
// A full table (kept below 3/4) drops the site and counts it.
//
// Where the call path is not complete (a binary without frame pointers),
// the site keeps one copy of the user stack with its registers, the first
// one seen, for unwinding after the run; the copies are a bounded pool, and
// sites that wanted one when it was spent are counted.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/sampling/slot_bitmap.hpp"

namespace stacksage::sampling {

enum class Unwind : std::uint8_t {
    None = 0,       // only the instruction address is known
    Callchain = 1,  // the frames are the call path
    Stack = 2,      // the frames are not complete: unwind the copied stack
};
const char* unwind_name(Unwind u);

inline constexpr std::uint32_t kMaxSiteFrames = 32;

struct SiteEntry {
    std::atomic<std::uint64_t> hash;  // 0: free
    std::atomic<std::uint32_t> ready;  // the fields below are written
    std::uint32_t nframes;
    std::uint64_t ip;
    std::atomic<std::uint64_t> samples;
    // 0: no stack copy; kStackNoRoom: wanted, none left; kStackClaiming: being
    // copied; otherwise index + 1 in the stack pool.
    std::atomic<std::uint32_t> stack;
    std::uint8_t unwind;  // Unwind
    std::uint64_t frames[kMaxSiteFrames];
};

struct StackCopy {
    std::uint64_t ip, sp, bp;
    std::uint32_t size;  // bytes of data
    unsigned char data[1];  // stack_bytes of them (the pool's stride)
};

class SiteTable {
public:
    static constexpr std::uint32_t kStackNoRoom = 0xffffffffu, kStackClaiming = 0xfffffffeu;

    // Bytes for capacity sites (a power of two) and stack_capacity copies of
    // stack_bytes each.
    static std::size_t bytes_for(std::uint32_t capacity, std::uint32_t stack_capacity, std::uint32_t stack_bytes);
    // Uses zeroed memory (fresh mmap) of bytes_for(...); touches nothing.
    void init_zeroed(void* memory, std::uint32_t capacity, std::uint32_t stack_capacity, std::uint32_t stack_bytes);

    // The id of the site (ip, frames), adding it when new, and adds count
    // to its samples. \return -1 when the table is full (counted in dropped()).
    std::int32_t intern(std::uint64_t ip, const std::uint64_t* frames, std::uint32_t nframes, Unwind unwind,
                        std::uint64_t count);
    // Keeps a copy of the user stack for the site when it has none yet.
    // \return true when this call kept it.
    bool keep_stack(std::int32_t site, std::uint64_t ip, std::uint64_t sp, std::uint64_t bp,
                    const unsigned char* data, std::size_t size);
    // Whether the site still wants a stack copy (cheap: one load).
    bool wants_stack(std::int32_t site) const;

    std::uint32_t capacity() const { return capacity_; }
    std::uint32_t size() const { return used_.load(std::memory_order_relaxed); }
    std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
    std::uint32_t stacks() const {
        const std::uint32_t n = stacks_used_.load(std::memory_order_relaxed);
        return n < stack_capacity_ ? n : stack_capacity_;
    }
    std::uint64_t stacks_dropped() const { return stacks_dropped_.load(std::memory_order_relaxed); }
    std::uint32_t stack_bytes() const { return stack_bytes_; }

    // The entry of site id, or nullptr when the slot is free or not yet written.
    const SiteEntry* site(std::int32_t id) const;
    // fn(id, const SiteEntry&) for every written site, in id order (the free
    // slots' pages are not read: SlotBitmap).
    template <class Fn> void for_each(Fn&& fn) const {
        used_slots_.for_each([&](std::uint32_t i) {
            if (const SiteEntry* e = site(static_cast<std::int32_t>(i))) fn(static_cast<std::int32_t>(i), *e);
        });
    }
    // Its stack copy, or nullptr.
    const StackCopy* stack_of(const SiteEntry& e) const;
    // What the summary says: Callchain and None as interned; Stack only with
    // a copy (a site that wanted one and got none says None).
    Unwind unwind_of(const SiteEntry& e) const;

    // In a forked child: a slot claimed by a thread that no longer exists
    // stays unready (never written), nothing else to repair.

private:
    StackCopy* stack_at(std::uint32_t index) const;

    SiteEntry* entries_ = nullptr;
    SlotBitmap used_slots_;
    unsigned char* stacks_ = nullptr;
    std::uint32_t capacity_ = 0, stack_capacity_ = 0, stack_bytes_ = 0;
    std::size_t stack_stride_ = 0;
    std::atomic<std::uint32_t> used_{0};
    std::atomic<std::uint64_t> dropped_{0};
    std::atomic<std::uint32_t> stacks_used_{0};
    std::atomic<std::uint64_t> stacks_dropped_{0};
};

// The 64-bit hash of a site's key (never 0).
std::uint64_t site_hash(std::uint64_t ip, const std::uint64_t* frames, std::uint32_t nframes);

}  // namespace stacksage::sampling
