// The data objects sampled addresses belong to (docs/sample-file.md, "Code
// and data": `object` records): the blocks allocated from one call site
// (heap or anonymous mmap), a page of a module's static data, a thread's
// stack, or nothing known.
//
// One table per process in memory mapped once, claimed lock-free like the
// site table (site_table.hpp): an object's id is its slot; a full table
// drops the object and counts it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/sampling/slot_bitmap.hpp"

namespace stacksage::sampling {

enum class ObjectKind : std::uint8_t { Heap = 1, Mmap = 2, Static = 3, Stack = 4, Unknown = 5 };
const char* object_kind_name(ObjectKind kind);

struct ObjectEntry {
    std::atomic<std::uint64_t> hash;  // 0: free
    std::atomic<std::uint32_t> ready;
    ObjectKind kind;
    std::int32_t ref;      // heap, mmap: the site id; static: the module id
    std::uint64_t detail;  // static: the offset in the module's file; stack: the tid
    std::atomic<std::uint64_t> blocks, bytes;
};

class ObjectTable {
public:
    // The entries, then the bitmap of the used ones.
    static std::size_t bytes_for(std::uint32_t capacity) {
        return capacity * sizeof(ObjectEntry) + SlotBitmap::bytes_for(capacity);
    }
    void init_zeroed(void* memory, std::uint32_t capacity);

    // The id of the object (kind, ref, detail), added when new. \return -1
    // when the table is full (counted in dropped()).
    std::int32_t intern(ObjectKind kind, std::int32_t ref, std::uint64_t detail);
    // A block of bytes allocated for the object.
    void add_block(std::int32_t id, std::uint64_t bytes);

    const ObjectEntry* object(std::int32_t id) const;
    // fn(id, const ObjectEntry&) for every written object, in id order (the
    // free slots' pages are not read: SlotBitmap).
    template <class Fn> void for_each(Fn&& fn) const {
        used_slots_.for_each([&](std::uint32_t i) {
            if (const ObjectEntry* e = object(static_cast<std::int32_t>(i))) fn(static_cast<std::int32_t>(i), *e);
        });
    }
    std::uint32_t capacity() const { return capacity_; }
    std::uint32_t size() const { return used_.load(std::memory_order_relaxed); }
    std::uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

private:
    ObjectEntry* entries_ = nullptr;
    SlotBitmap used_slots_;
    std::uint32_t capacity_ = 0;
    std::atomic<std::uint32_t> used_{0};
    std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace stacksage::sampling
