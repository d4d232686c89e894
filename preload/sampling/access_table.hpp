// Samples aggregated in the process: one entry per (backend, issuing CPU,
// serving level, NUMA node of the address, operation, remote, hops, call
// site, data object), with the count, the total latency weight and a
// latency histogram.
//
// This is what becomes a MemoryAccess DataPath (PU -> serving component)
// and, for cpu-clock samples, a RanOn count. The table lives in memory the
// caller provides (the preload maps it once per thread), is open-addressed
// with a fixed capacity, and never allocates: a full table drops the sample
// and counts it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/sampling/backend.hpp"
#include "preload/sampling/data_source.hpp"
#include "preload/sampling/latency_histogram.hpp"
#include "preload/sampling/slot_bitmap.hpp"

namespace stacksage::sampling {

struct AccessKey {
    Backend backend = Backend::PageFault;
    ServedBy served_by = ServedBy::Unknown;
    MemOp op = MemOp::Unknown;
    bool remote = false;
    bool missed = false;
    std::uint8_t hops = 0;     // 0..7
    std::uint32_t cpu = 0;     // < 2^20
    std::int32_t node = -1;    // NUMA node holding the address; -1 unknown; < 4095
    std::int32_t site = -1;    // code_data_attribution.hpp's ids; -1 unknown
    std::int32_t object = -1;

    // Everything but site and object.
    std::uint64_t pack() const;
    // Site and object.
    std::uint64_t pack_where() const { return where_of(site, object); }
    static std::uint64_t where_of(std::int32_t site, std::int32_t object) {
        return static_cast<std::uint32_t>(site + 1) | std::uint64_t{static_cast<std::uint32_t>(object + 1)} << 32;
    }
    static AccessKey unpack(std::uint64_t packed, std::uint64_t where = 0);
    friend bool operator==(const AccessKey& a, const AccessKey& b) {
        return a.pack() == b.pack() && a.pack_where() == b.pack_where();
    }
};

struct AccessEntry {
    std::uint64_t key = 0;  // AccessKey::pack(); kEmpty (0) when unused
    std::uint64_t where = 0;  // AccessKey::pack_where()
    std::uint64_t count = 0;
    std::uint64_t weight_sum = 0;
    std::uint64_t weight_max = 0;
    std::uint64_t histogram[kLatencyBuckets] = {};
    // Zero, so that fresh anonymous memory is an empty table whose pages
    // are touched only as entries get used.
    static constexpr std::uint64_t kEmpty = 0;
};

class AccessTable {
public:
    // Bytes of memory a table of `capacity` entries (a power of two) needs:
    // the entries, then the bitmap of the used ones.
    static std::size_t bytes_for(std::uint32_t capacity) {
        return capacity * sizeof(AccessEntry) + SlotBitmap::bytes_for(capacity);
    }

    // Uses `memory` (at least bytes_for(capacity), 8-byte aligned) for a
    // table of capacity entries, a power of two >= 2. Marks them empty.
    void init(void* memory, std::uint32_t capacity);
    // The same for memory known to be zero (fresh mmap): touches nothing.
    void init_zeroed(void* memory, std::uint32_t capacity);

    // Adds one sample. \return false (and counts it in dropped()) when the
    // table is full (kept below 3/4 so probes stay short).
    bool add(const AccessKey& key, std::uint64_t weight) {
        return add_packed(key.pack(), key.pack_where(), weight, 1);
    }
    bool add_packed(std::uint64_t packed, std::uint64_t where, std::uint64_t weight, std::uint64_t count);
    // Adds every entry of another table (at process end: a thread's table
    // into the totals).
    void merge(const AccessTable& other);

    std::uint32_t capacity() const { return capacity_; }
    std::uint32_t size() const { return used_; }
    std::uint64_t dropped() const { return dropped_; }
    std::uint64_t total() const { return total_; }
    // Calls fn(AccessKey, const AccessEntry&) for every used entry, in slot
    // order (the empty slots' pages are not read: SlotBitmap).
    template <class Fn> void for_each(Fn&& fn) const {
        used_slots_.for_each([&](std::uint32_t i) { fn(AccessKey::unpack(entries_[i].key, entries_[i].where), entries_[i]); });
    }
    const AccessEntry* find(const AccessKey& key) const;

private:
    AccessEntry* entries_ = nullptr;
    SlotBitmap used_slots_;
    std::uint32_t capacity_ = 0, used_ = 0;
    std::uint64_t dropped_ = 0, total_ = 0;
};

}  // namespace stacksage::sampling
