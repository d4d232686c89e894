#include "preload/known_mask.hpp"

#include <atomic>

namespace stacksage::preload {

namespace {

// Starts at 1 so that a zeroed cache (a new thread's TLS) is never current.
constinit std::atomic<std::uint32_t> g_generation{1};

// Small on purpose: it lives in every thread's static TLS, which glibc
// clears at each thread's creation.
struct MaskCache {
    static constexpr unsigned kWords = 8;  // 512 CPUs
    std::uint64_t words[kWords];
    unsigned used_words;
    std::uint32_t generation;  // 0: nothing cached
};
__attribute__((tls_model("initial-exec"))) constinit thread_local MaskCache tls_cache{};

}  // namespace

std::uint32_t affinity_generation() { return g_generation.load(std::memory_order_acquire); }

AffinityChangeScope::AffinityChangeScope() { g_generation.fetch_add(1, std::memory_order_acq_rel); }
AffinityChangeScope::~AffinityChangeScope() { g_generation.fetch_add(1, std::memory_order_acq_rel); }

void remember_own_mask(const CpuMask& mask, std::uint32_t generation) {
    MaskCache& c = tls_cache;
    if (!mask.valid || mask.used_words > MaskCache::kWords) {
        c.generation = 0;
        return;
    }
    for (unsigned i = 0; i < mask.used_words; ++i) c.words[i] = mask.words[i];
    c.used_words = mask.used_words;
    c.generation = generation;
}

std::uint32_t own_mask(CpuMask& out) {
    const std::uint32_t now = affinity_generation();
    const MaskCache& c = tls_cache;
    if (c.generation == now) {
        for (unsigned i = 0; i < c.used_words; ++i) out.words[i] = c.words[i];
        out.used_words = c.used_words;
        out.valid = true;
        return now;
    }
    out.read_thread(0);
    remember_own_mask(out, now);
    return now;
}

}  // namespace stacksage::preload
