#include "preload/sampling/access_table.hpp"

#include <cstring>

namespace stacksage::sampling {

namespace {
constexpr std::uint64_t bits(std::uint64_t v, unsigned width) { return v & ((std::uint64_t{1} << width) - 1); }

std::uint32_t slot_of(std::uint64_t packed, std::uint64_t where, std::uint32_t capacity) {
    // Fibonacci hashing: keys differ mostly in low bits (the CPU number, the site).
    return static_cast<std::uint32_t>(((packed ^ (where * 0xff51afd7ed558ccdull)) * 0x9E3779B97F4A7C15ull) >> 32) &
           (capacity - 1);
}
}  // namespace

// cpu: bits 0-19, node + 1: 20-31, backend: 32-35, served_by: 36-39,
// op: 40-42, remote: 43, hops: 44-46, missed: 47; bit 63 always set, so a
// packed key is never kEmpty.
std::uint64_t AccessKey::pack() const {
    const std::uint64_t node1 = node < 0 ? 0 : bits(static_cast<std::uint64_t>(node) + 1, 12);
    return bits(cpu, 20) | node1 << 20 | bits(static_cast<std::uint64_t>(backend), 4) << 32 |
           bits(static_cast<std::uint64_t>(served_by), 4) << 36 | bits(static_cast<std::uint64_t>(op), 3) << 40 |
           std::uint64_t{remote} << 43 | bits(hops, 3) << 44 | std::uint64_t{missed} << 47 | std::uint64_t{1} << 63;
}

AccessKey AccessKey::unpack(std::uint64_t p, std::uint64_t where) {
    AccessKey k;
    k.site = static_cast<std::int32_t>(static_cast<std::uint32_t>(where)) - 1;
    k.object = static_cast<std::int32_t>(static_cast<std::uint32_t>(where >> 32)) - 1;
    k.cpu = static_cast<std::uint32_t>(bits(p, 20));
    k.node = static_cast<std::int32_t>(bits(p >> 20, 12)) - 1;
    k.backend = static_cast<Backend>(bits(p >> 32, 4));
    k.served_by = static_cast<ServedBy>(bits(p >> 36, 4));
    k.op = static_cast<MemOp>(bits(p >> 40, 3));
    k.remote = bits(p >> 43, 1) != 0;
    k.hops = static_cast<std::uint8_t>(bits(p >> 44, 3));
    k.missed = bits(p >> 47, 1) != 0;
    return k;
}

void AccessTable::init(void* memory, std::uint32_t capacity) {
    for (std::uint32_t i = 0; i < capacity; ++i) static_cast<AccessEntry*>(memory)[i].key = AccessEntry::kEmpty;
    std::memset(static_cast<unsigned char*>(memory) + capacity * sizeof(AccessEntry), 0, SlotBitmap::bytes_for(capacity));
    init_zeroed(memory, capacity);
}

void AccessTable::init_zeroed(void* memory, std::uint32_t capacity) {
    entries_ = static_cast<AccessEntry*>(memory);
    used_slots_.init_zeroed(static_cast<unsigned char*>(memory) + capacity * sizeof(AccessEntry), capacity);
    capacity_ = capacity;
    used_ = 0;
    dropped_ = 0;
    total_ = 0;
}

bool AccessTable::add_packed(std::uint64_t packed, std::uint64_t where, std::uint64_t weight, std::uint64_t count) {
    std::uint32_t i = slot_of(packed, where, capacity_);
    while (true) {
        AccessEntry& e = entries_[i];
        if (e.key == packed && e.where == where) break;
        if (e.key == AccessEntry::kEmpty) {
            if ((used_ + 1) * 4 > capacity_ * 3) {
                dropped_ += count;
                return false;
            }
            e = AccessEntry{};
            e.key = packed;
            e.where = where;
            used_slots_.mark(i);
            ++used_;
            break;
        }
        i = (i + 1) & (capacity_ - 1);
    }
    AccessEntry& e = entries_[i];
    e.count += count;
    e.weight_sum += weight * count;
    if (weight > e.weight_max) e.weight_max = weight;
    e.histogram[latency_bucket(weight)] += count;
    total_ += count;
    return true;
}

void AccessTable::merge(const AccessTable& other) {
    other.used_slots_.for_each([&](std::uint32_t i) {
        const AccessEntry& src = other.entries_[i];
        std::uint32_t j = slot_of(src.key, src.where, capacity_);
        while ((entries_[j].key != src.key || entries_[j].where != src.where) && entries_[j].key != AccessEntry::kEmpty)
            j = (j + 1) & (capacity_ - 1);
        AccessEntry& dst = entries_[j];
        if (dst.key == AccessEntry::kEmpty) {
            if ((used_ + 1) * 4 > capacity_ * 3) {
                dropped_ += src.count;
                return;
            }
            dst = AccessEntry{};
            dst.key = src.key;
            dst.where = src.where;
            used_slots_.mark(j);
            ++used_;
        }
        dst.count += src.count;
        dst.weight_sum += src.weight_sum;
        if (src.weight_max > dst.weight_max) dst.weight_max = src.weight_max;
        for (int b = 0; b < kLatencyBuckets; ++b) dst.histogram[b] += src.histogram[b];
        total_ += src.count;
    });
    dropped_ += other.dropped_;
}

const AccessEntry* AccessTable::find(const AccessKey& key) const {
    const std::uint64_t packed = key.pack(), where = key.pack_where();
    std::uint32_t i = slot_of(packed, where, capacity_);
    for (std::uint32_t n = 0; n < capacity_; ++n, i = (i + 1) & (capacity_ - 1)) {
        if (entries_[i].key == packed && entries_[i].where == where) return &entries_[i];
        if (entries_[i].key == AccessEntry::kEmpty) return nullptr;
    }
    return nullptr;
}

}  // namespace stacksage::sampling
