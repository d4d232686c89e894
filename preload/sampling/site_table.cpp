#include "preload/sampling/site_table.hpp"

#include <cstddef>
#include <cstring>

namespace stacksage::sampling {

namespace {
std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}
std::size_t entries_bytes(std::uint32_t capacity) {
    return (static_cast<std::size_t>(capacity) * sizeof(SiteEntry) + 63) & ~std::size_t{63};
}
// The entries, then the bitmap of the used ones, then the stack copies.
std::size_t bitmap_bytes(std::uint32_t capacity) { return (SlotBitmap::bytes_for(capacity) + 63) & ~std::size_t{63}; }
std::size_t stride_of(std::uint32_t stack_bytes) {
    return (offsetof(StackCopy, data) + stack_bytes + 7) & ~std::size_t{7};
}
}  // namespace

const char* unwind_name(Unwind u) {
    switch (u) {
    case Unwind::Callchain: return "callchain";
    case Unwind::Stack: return "stack";
    case Unwind::None: break;
    }
    return "none";
}

std::uint64_t site_hash(std::uint64_t ip, const std::uint64_t* frames, std::uint32_t nframes) {
    std::uint64_t h = mix(0x6a09e667f3bcc908ull, ip);
    for (std::uint32_t i = 0; i < nframes; ++i) h = mix(h, frames[i]);
    h = mix(h, nframes);
    return h == 0 ? 1 : h;
}

std::size_t SiteTable::bytes_for(std::uint32_t capacity, std::uint32_t stack_capacity, std::uint32_t stack_bytes) {
    return entries_bytes(capacity) + bitmap_bytes(capacity) +
           static_cast<std::size_t>(stack_capacity) * stride_of(stack_bytes);
}

void SiteTable::init_zeroed(void* memory, std::uint32_t capacity, std::uint32_t stack_capacity,
                            std::uint32_t stack_bytes) {
    entries_ = static_cast<SiteEntry*>(memory);
    capacity_ = capacity;
    used_slots_.init_zeroed(static_cast<unsigned char*>(memory) + entries_bytes(capacity), capacity);
    stacks_ = static_cast<unsigned char*>(memory) + entries_bytes(capacity) + bitmap_bytes(capacity);
    stack_capacity_ = stack_bytes == 0 ? 0 : stack_capacity;
    stack_bytes_ = stack_bytes;
    stack_stride_ = stride_of(stack_bytes);
    used_.store(0);
    dropped_.store(0);
    stacks_used_.store(0);
    stacks_dropped_.store(0);
}

std::int32_t SiteTable::intern(std::uint64_t ip, const std::uint64_t* frames, std::uint32_t nframes, Unwind unwind,
                               std::uint64_t count) {
    if (capacity_ == 0) return -1;
    if (nframes > kMaxSiteFrames) nframes = kMaxSiteFrames;
    const std::uint64_t h = site_hash(ip, frames, nframes);
    std::uint32_t i = static_cast<std::uint32_t>(h >> 32) & (capacity_ - 1);
    for (std::uint32_t probes = 0; probes < capacity_; ++probes, i = (i + 1) & (capacity_ - 1)) {
        SiteEntry& e = entries_[i];
        std::uint64_t seen = e.hash.load(std::memory_order_acquire);
        if (seen == 0) {
            // Kept below 3/4 full so that probes stay short.
            if ((used_.load(std::memory_order_relaxed) + 1) * 4 > capacity_ * 3) break;
            if (e.hash.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
                used_.fetch_add(1, std::memory_order_relaxed);
                e.ip = ip;
                e.nframes = nframes;
                for (std::uint32_t k = 0; k < nframes; ++k) e.frames[k] = frames[k];
                e.unwind = static_cast<std::uint8_t>(unwind);
                e.samples.fetch_add(count, std::memory_order_relaxed);
                e.ready.store(1, std::memory_order_release);
                used_slots_.mark(i);
                return static_cast<std::int32_t>(i);
            }
            // Another thread claimed it first: look at what it claimed it for.
        }
        if (seen == h) {
            e.samples.fetch_add(count, std::memory_order_relaxed);
            return static_cast<std::int32_t>(i);
        }
    }
    dropped_.fetch_add(count, std::memory_order_relaxed);
    return -1;
}

bool SiteTable::wants_stack(std::int32_t site) const {
    if (site < 0 || static_cast<std::uint32_t>(site) >= capacity_ || stack_capacity_ == 0) return false;
    return entries_[site].stack.load(std::memory_order_relaxed) == 0;
}

bool SiteTable::keep_stack(std::int32_t site, std::uint64_t ip, std::uint64_t sp, std::uint64_t bp,
                           const unsigned char* data, std::size_t size) {
    if (!wants_stack(site) || data == nullptr || size == 0) return false;
    SiteEntry& e = entries_[site];
    std::uint32_t expected = 0;
    if (!e.stack.compare_exchange_strong(expected, kStackClaiming, std::memory_order_acq_rel)) return false;
    const std::uint32_t index = stacks_used_.fetch_add(1, std::memory_order_relaxed);
    if (index >= stack_capacity_) {
        stacks_dropped_.fetch_add(1, std::memory_order_relaxed);
        e.stack.store(kStackNoRoom, std::memory_order_release);
        return false;
    }
    StackCopy* c = stack_at(index);
    if (size > stack_bytes_) size = stack_bytes_;
    c->ip = ip;
    c->sp = sp;
    c->bp = bp;
    c->size = static_cast<std::uint32_t>(size);
    std::memcpy(c->data, data, size);
    e.stack.store(index + 1, std::memory_order_release);
    return true;
}

const SiteEntry* SiteTable::site(std::int32_t id) const {
    if (id < 0 || static_cast<std::uint32_t>(id) >= capacity_) return nullptr;
    const SiteEntry& e = entries_[id];
    return e.ready.load(std::memory_order_acquire) ? &e : nullptr;
}

StackCopy* SiteTable::stack_at(std::uint32_t index) const {
    return reinterpret_cast<StackCopy*>(stacks_ + static_cast<std::size_t>(index) * stack_stride_);
}

const StackCopy* SiteTable::stack_of(const SiteEntry& e) const {
    const std::uint32_t s = e.stack.load(std::memory_order_acquire);
    if (s == 0 || s == kStackNoRoom || s == kStackClaiming) return nullptr;
    return stack_at(s - 1);
}

Unwind SiteTable::unwind_of(const SiteEntry& e) const {
    const auto u = static_cast<Unwind>(e.unwind);
    if (u != Unwind::Stack) return u;
    return stack_of(e) != nullptr ? Unwind::Stack : Unwind::None;
}

}  // namespace stacksage::sampling
