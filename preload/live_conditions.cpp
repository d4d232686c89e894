#include "preload/live_conditions.hpp"

namespace stacksage::preload::live {

void mask_empty(CpuMask& m) {
    m.used_words = 0;
    m.valid = true;
}

void mask_or(CpuMask& into, const CpuMask& other) {
    for (unsigned i = into.used_words; i < other.used_words; ++i) into.words[i] = 0;
    if (other.used_words > into.used_words) into.used_words = other.used_words;
    for (unsigned i = 0; i < other.used_words; ++i) into.words[i] |= other.words[i];
    into.valid = true;
}

bool mask_subset(const CpuMask& inner, const CpuMask& outer) {
    for (unsigned i = 0; i < inner.used_words; ++i)
        if ((inner.words[i] & ~outer.word(i)) != 0) return false;
    return true;
}

bool mask_has(const CpuMask& m, unsigned cpu) { return (m.word(cpu / 64) >> (cpu % 64)) & 1u; }

void mask_set(CpuMask& m, unsigned cpu) {
    const unsigned w = cpu / 64;
    if (w >= CpuMask::kWords) return;
    for (unsigned i = m.used_words; i <= w; ++i) m.words[i] = 0;
    if (w + 1 > m.used_words) m.used_words = w + 1;
    m.words[w] |= std::uint64_t{1} << (cpu % 64);
    m.valid = true;
}

bool is_busy(const ThreadReading& t, std::uint64_t interval_ns) {
    return t.runnable || (t.has_interval && interval_ns > 0 && t.ran_ns * 2 >= interval_ns);
}

namespace {

// A free CPU of `mask` (not in taken), preferring `preferred`; -1 when none.
int free_cpu(const CpuMask& mask, const CpuMask& taken, int preferred) {
    if (preferred >= 0 && mask_has(mask, static_cast<unsigned>(preferred)) &&
        !mask_has(taken, static_cast<unsigned>(preferred)))
        return preferred;
    for (unsigned i = 0; i < mask.used_words; ++i) {
        const std::uint64_t free = mask.words[i] & ~taken.word(i);
        if (free != 0) return static_cast<int>(i * 64 + static_cast<unsigned>(__builtin_ctzll(free)));
    }
    return -1;
}

// Scratch for one judgement: the watcher judges on one thread at a time.
std::uint32_t g_order[kMaxThreads];
std::uint32_t g_width[kMaxThreads];

}  // namespace

void judge(const NodeReading& r, Verdict& out) {
    mask_empty(out.allowed);
    mask_empty(out.crowded);
    mask_empty(out.idle_cpus);
    out.oversubscribed = out.idle = false;
    out.crowded_threads = out.busy_threads = 0;
    out.throttled = r.throttled_periods > 0;

    const std::size_t n = r.thread_count < kMaxThreads ? r.thread_count : kMaxThreads;
    std::size_t busy = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const ThreadReading& t = r.threads[i];
        if (t.mask >= r.mask_count) continue;
        mask_or(out.allowed, r.masks[t.mask]);
        if (!is_busy(t, r.interval_ns)) continue;
        g_order[busy] = static_cast<std::uint32_t>(i);
        g_width[busy] = r.masks[t.mask].count();
        ++busy;
    }
    out.busy_threads = static_cast<unsigned>(busy);
    // Narrowest masks first (shell sort: no library, no allocation).
    for (std::size_t gap = busy / 2; gap > 0; gap /= 2)
        for (std::size_t i = gap; i < busy; ++i)
            for (std::size_t j = i; j >= gap && g_width[j - gap] > g_width[j]; j -= gap) {
                const std::uint32_t o = g_order[j], w = g_width[j];
                g_order[j] = g_order[j - gap];
                g_width[j] = g_width[j - gap];
                g_order[j - gap] = o;
                g_width[j - gap] = w;
            }

    CpuMask taken;
    mask_empty(taken);
    for (std::size_t k = 0; k < busy; ++k) {
        const ThreadReading& t = r.threads[g_order[k]];
        const int cpu = free_cpu(r.masks[t.mask], taken, t.last_cpu);
        if (cpu >= 0) mask_set(taken, static_cast<unsigned>(cpu));
        else mask_or(out.crowded, r.masks[t.mask]);
    }
    if (out.crowded.count() > 0) {
        out.oversubscribed = true;
        for (std::size_t k = 0; k < busy; ++k)
            if (mask_subset(r.masks[r.threads[g_order[k]].mask], out.crowded)) ++out.crowded_threads;
    }
    for (unsigned i = 0; i < out.allowed.used_words; ++i) {
        const std::uint64_t idle = out.allowed.words[i] & ~taken.word(i);
        if (idle == 0) continue;
        for (std::uint64_t w = idle; w != 0; w &= w - 1)
            mask_set(out.idle_cpus, i * 64 + static_cast<unsigned>(__builtin_ctzll(w)));
    }
    out.idle = out.idle_cpus.count() > 0;
}

bool HoldClock::update(bool holds, std::uint64_t interval_start_ns, std::uint64_t now_ns, std::uint64_t hold_ns) {
    if (!holds) {
        holding_ = fired_ = false;
        return false;
    }
    if (!holding_) {
        holding_ = true;
        since_ns_ = interval_start_ns;
    }
    if (fired_ || now_ns - since_ns_ < hold_ns) return false;
    fired_ = true;
    return true;
}

}  // namespace stacksage::preload::live
