#include "preload/sampling/object_table.hpp"

namespace stacksage::sampling {

const char* object_kind_name(ObjectKind kind) {
    switch (kind) {
    case ObjectKind::Heap: return "heap";
    case ObjectKind::Mmap: return "mmap";
    case ObjectKind::Static: return "static";
    case ObjectKind::Stack: return "stack";
    case ObjectKind::Unknown: break;
    }
    return "unknown";
}

void ObjectTable::init_zeroed(void* memory, std::uint32_t capacity) {
    entries_ = static_cast<ObjectEntry*>(memory);
    used_slots_.init_zeroed(static_cast<unsigned char*>(memory) + capacity * sizeof(ObjectEntry), capacity);
    capacity_ = capacity;
    used_.store(0);
    dropped_.store(0);
}

std::int32_t ObjectTable::intern(ObjectKind kind, std::int32_t ref, std::uint64_t detail) {
    if (capacity_ == 0) return -1;
    std::uint64_t h = (static_cast<std::uint64_t>(kind) << 56 ^ static_cast<std::uint32_t>(ref)) * 0x9E3779B97F4A7C15ull;
    h = (h ^ detail ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
    if (h == 0) h = 1;
    std::uint32_t i = static_cast<std::uint32_t>(h >> 32) & (capacity_ - 1);
    for (std::uint32_t probes = 0; probes < capacity_; ++probes, i = (i + 1) & (capacity_ - 1)) {
        ObjectEntry& e = entries_[i];
        std::uint64_t seen = e.hash.load(std::memory_order_acquire);
        if (seen == 0) {
            if ((used_.load(std::memory_order_relaxed) + 1) * 4 > capacity_ * 3) break;
            if (e.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
                used_.fetch_add(1, std::memory_order_relaxed);
                e.kind = kind;
                e.ref = ref;
                e.detail = detail;
                e.ready.store(1, std::memory_order_release);
                used_slots_.mark(i);
                return static_cast<std::int32_t>(i);
            }
        }
        if (seen == h) return static_cast<std::int32_t>(i);
    }
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return -1;
}

void ObjectTable::add_block(std::int32_t id, std::uint64_t bytes) {
    if (id < 0 || static_cast<std::uint32_t>(id) >= capacity_) return;
    entries_[id].blocks.fetch_add(1, std::memory_order_relaxed);
    entries_[id].bytes.fetch_add(bytes, std::memory_order_relaxed);
}

const ObjectEntry* ObjectTable::object(std::int32_t id) const {
    if (id < 0 || static_cast<std::uint32_t>(id) >= capacity_) return nullptr;
    const ObjectEntry& e = entries_[id];
    return e.ready.load(std::memory_order_acquire) ? &e : nullptr;
}

}  // namespace stacksage::sampling
