#include "preload/thread_registry.hpp"

#include <atomic>

namespace stacksage::preload {

namespace {

constexpr std::uintptr_t kEmpty = 0;
constexpr std::uintptr_t kRemoved = 1;  // never a pthread_t (those are aligned pointers)
constexpr std::size_t kSlots = 16384;   // live threads per process we can name

struct Slot {
    std::atomic<std::uintptr_t> key{kEmpty};
    std::atomic<int> tid{0};  // 0 while the slot is being filled or emptied
    std::atomic<std::uint64_t> start_ns{0};
};
constinit Slot g_slots[kSlots];
// How many slots hold a thread: lets a process without live threads skip the walk.
constinit std::atomic<std::size_t> g_registered{0};

std::size_t home(std::uintptr_t key) { return (key >> 4) * 0x9E3779B97F4A7C15ull % kSlots; }

}  // namespace

void register_thread(std::uintptr_t pthread_id, int tid, std::uint64_t start_ns) {
    if (pthread_id <= kRemoved) return;
    std::size_t i = home(pthread_id);
    for (std::size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
        std::uintptr_t k = g_slots[i].key.load(std::memory_order_acquire);
        if (k != kEmpty && k != kRemoved) continue;
        if (g_slots[i].key.compare_exchange_strong(k, pthread_id, std::memory_order_acq_rel)) {
            g_slots[i].start_ns.store(start_ns, std::memory_order_relaxed);
            g_slots[i].tid.store(tid, std::memory_order_release);  // publishes start_ns
            g_registered.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
}

void unregister_thread(std::uintptr_t pthread_id) {
    std::size_t i = home(pthread_id);
    for (std::size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
        std::uintptr_t k = g_slots[i].key.load(std::memory_order_acquire);
        if (k == kEmpty) return;
        if (k == pthread_id) {
            g_slots[i].tid.store(0, std::memory_order_relaxed);
            g_slots[i].key.store(kRemoved, std::memory_order_release);
            g_registered.fetch_sub(1, std::memory_order_relaxed);
            return;
        }
    }
}

int find_thread_tid(std::uintptr_t pthread_id) {
    std::size_t i = home(pthread_id);
    for (std::size_t probe = 0; probe < kSlots; ++probe, i = (i + 1) % kSlots) {
        std::uintptr_t k = g_slots[i].key.load(std::memory_order_acquire);
        if (k == kEmpty) return -1;
        if (k == pthread_id) {
            int tid = g_slots[i].tid.load(std::memory_order_acquire);
            return tid > 0 ? tid : -1;
        }
    }
    return -1;
}

void for_each_registered_thread(void (*visit)(int tid, std::uint64_t start_ns, void* context), void* context) {
    if (g_registered.load(std::memory_order_relaxed) == 0) return;
    for (Slot& slot : g_slots) {
        const std::uintptr_t k = slot.key.load(std::memory_order_acquire);
        if (k == kEmpty || k == kRemoved) continue;
        const int tid = slot.tid.load(std::memory_order_acquire);
        if (tid > 0) visit(tid, slot.start_ns.load(std::memory_order_relaxed), context);
    }
}

}  // namespace stacksage::preload
