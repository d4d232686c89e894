#include "preload/thread_launch.hpp"

#include <sched.h>

#include "preload/module_table.hpp"
#include "preload/thread_start_line.hpp"
#include "preload/thread_start_writer.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// A slot's states. Free -> Filling (the creator) -> Pending (the thread
// started) -> Writing (claimed by the one that writes its start) -> Free.
// A creation that fails goes from Filling back to Free. The state word's
// other bits count the slot's uses (each free starts the next), so that a
// thread's end, which holds on to its slot, never claims the slot of the
// thread that took it after its start was written.
constexpr std::uint64_t kFree = 0;
constexpr std::uint64_t kFilling = 1;
constexpr std::uint64_t kPending = 2;
constexpr std::uint64_t kWriting = 3;
constexpr std::uint64_t kStateBits = 3;

std::uint64_t state_of(std::uint64_t word) { return word & kStateBits; }
std::uint64_t use_of(std::uint64_t word) { return word >> 2; }
std::uint64_t word_of(std::uint64_t use, std::uint64_t state) { return use << 2 | state; }

// Slots come from a fixed pool: no allocation on the creation path, and a
// full pool only means that creation runs untraced (counted in process_end).
constexpr std::size_t kLaunchSlots = 512;
constinit Launch g_launches[kLaunchSlots];
constinit std::atomic<std::size_t> g_next_launch{0};
// The slot released last, tried first: a program that creates and joins
// threads one after the other reuses one slot whose lines are still in the
// caches, instead of cycling through 512 slots (over 500 KB) that are cold.
constinit std::atomic<std::size_t> g_last_released{0};

// One bit per slot whose start is pending, in one cache line: what the
// writers scan instead of 512 slots.
constexpr std::size_t kWords = kLaunchSlots / 64;
struct alignas(64) PendingBits {
    std::atomic<std::uint64_t> words[kWords];
};
constinit PendingBits g_pending{};

std::size_t index_of(const Launch& l) { return static_cast<std::size_t>(&l - g_launches); }

// fn(slot) for every slot whose start is pending, each word of the bits read
// once; stops early when fn returns true. \return whether fn did.
template <class Fn> bool any_pending_slot(Fn&& fn) {
    for (std::size_t w = 0; w < kWords; ++w) {
        std::uint64_t bits = g_pending.words[w].load(std::memory_order_acquire);
        for (; bits != 0; bits &= bits - 1)
            if (fn(g_launches[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))])) return true;
    }
    return false;
}

bool try_take(Launch& l) {
    std::uint64_t word = l.state.load(std::memory_order_relaxed);
    return state_of(word) == kFree &&
           l.state.compare_exchange_strong(word, word_of(use_of(word), kFilling), std::memory_order_acquire);
}

void free_slot(Launch& l) {
    const std::uint64_t use = use_of(l.state.load(std::memory_order_relaxed));
    l.state.store(word_of(use + 1, kFree), std::memory_order_release);
    g_last_released.store(index_of(l), std::memory_order_relaxed);
}

// Takes the right to write l's start, of its use `use` (any use when ~0);
// the one that succeeds writes it.
bool claim(Launch& l, std::uint64_t use = ~std::uint64_t{0}) {
    std::uint64_t word = l.state.load(std::memory_order_relaxed);
    if (state_of(word) != kPending || (use != ~std::uint64_t{0} && use_of(word) != use)) return false;
    if (!l.state.compare_exchange_strong(word, word_of(use_of(word), kWriting), std::memory_order_acq_rel))
        return false;
    const std::size_t i = index_of(l);
    g_pending.words[i / 64].fetch_and(~(std::uint64_t{1} << (i % 64)), std::memory_order_relaxed);
    return true;
}

void mark_pending(Launch& l) {
    const std::uint64_t use = use_of(l.state.load(std::memory_order_relaxed));
    l.state.store(word_of(use, kPending), std::memory_order_release);
    const std::size_t i = index_of(l);
    // seq_cst: the start-line writer going to sleep sees it, or is woken.
    g_pending.words[i / 64].fetch_or(std::uint64_t{1} << (i % 64), std::memory_order_seq_cst);
}

// The thread_start line of a claimed slot, with its end when given, built on
// the stack and, when its room (thread_start_line_room) does not fit there,
// in the shared big buffer. False when it did not fit without the lock
// may_lock forbids: the start is then left pending, and a line that names
// the thread could come first, so the buffer takes module paths of up to
// about 280 bytes each. It stays within the top 16 KiB of a thread's stack,
// whose pages glibc keeps when it caches the stack for the next thread.
bool write_start_line(const Launch& l, const ThreadEnding* ending, bool may_lock) {
    char small[1024];
    if (const std::size_t n = format_thread_start_line(small, sizeof small, l, process().pid, ending); n != 0) {
        process().log.write(small, n);
        return true;
    }
    if (!may_lock) return false;
    big_line_lock().lock();
    if (const std::size_t n = format_thread_start_line(big_line_buffer(), kBigLineBytes, l, process().pid, ending);
        n != 0) {
        process().log.write(big_line_buffer(), n);
    } else {
        // Paths and masks too long even for the big buffer: still counted.
        JsonLine line(big_line_buffer(), kBigLineBytes);
        begin_event_at(line, event_schema::thread_start::event, l.tid, l.start_ns.load(std::memory_order_relaxed));
        line.field_bool(event_schema::common::truncated, true);
        if (const std::size_t n = line.finish(); n != 0) process().log.write(big_line_buffer(), n);
    }
    big_line_lock().unlock();
    return true;
}

}  // namespace

Launch* acquire_launch() {
    Launch& recent = g_launches[g_last_released.load(std::memory_order_relaxed)];
    if (try_take(recent)) return &recent;
    std::size_t first = g_next_launch.fetch_add(1, std::memory_order_relaxed);
    for (int round = 0; round < 2; ++round) {
        for (std::size_t i = 0; i < kLaunchSlots; ++i) {
            Launch& l = g_launches[(first + i) % kLaunchSlots];
            if (try_take(l)) return &l;
        }
        // Every slot busy: most are starts not yet written (a burst of
        // creations within a millisecond); writing them frees their slots.
        if (round == 0) write_pending_starts(~std::uint64_t{0}, /*may_lock=*/true);
    }
    return nullptr;
}

void release_launch(Launch* l) { free_slot(*l); }

std::uint64_t set_start_pending(Launch& l) {
    // Read while the slot is still this thread's: once pending, another may
    // write the start and free the slot for its next use at once.
    const std::uint64_t use = use_of(l.state.load(std::memory_order_relaxed));
    mark_pending(l);
    wake_start_writer();
    return use;
}

bool write_start_at_end(Launch& l, std::uint64_t use, const ThreadEnding& ending) {
    if (claim(l, use)) {
        const bool together = ending.end_ns - l.start_ns.load(std::memory_order_relaxed) < kStartLineDelayNs;
        ThreadEnding ended = ending;
        if (together) ended.cpu = sched_getcpu();
        write_start_line(l, together ? &ended : nullptr, /*may_lock=*/true);
        free_slot(l);
        return together;
    }
    // Another thread is writing it, or has: its line must come before our
    // end. Only the state word is read: the slot may be in its next use.
    for (int spins = 0; l.state.load(std::memory_order_acquire) == word_of(use, kWriting) && spins < 100000; ++spins)
        raw::syscall6(SYS_sched_yield);
    return false;
}

namespace {
// Set once process_end is written: the log ends there, and the starts of
// threads still being created are left out with their other lines.
constinit std::atomic<bool> g_starts_closed{false};
}  // namespace

void close_pending_starts() { g_starts_closed.store(true, std::memory_order_release); }

std::uint64_t write_pending_starts(std::uint64_t started_by, bool may_lock) {
    if (g_starts_closed.load(std::memory_order_acquire)) return 0;
    std::uint64_t earliest_left = 0;
    auto leave_pending = [&](std::uint64_t start_ns) {
        if (earliest_left == 0 || start_ns < earliest_left) earliest_left = start_ns;
    };
    any_pending_slot([&](Launch& l) {
        const std::uint64_t start_ns = l.start_ns.load(std::memory_order_relaxed);
        if (start_ns > started_by) {
            leave_pending(start_ns);
        } else if (claim(l)) {  // else written or being written by another
            if (write_start_line(l, nullptr, may_lock)) {
                free_slot(l);
            } else {
                mark_pending(l);  // too long for the stack buffer: left to a writer that may lock
                leave_pending(start_ns);
            }
        }
        return false;
    });
    return earliest_left;
}

bool any_start_pending() {
    if (g_starts_closed.load(std::memory_order_relaxed)) return false;
    std::uint64_t any = 0;
    for (const auto& word : g_pending.words) any |= word.load(std::memory_order_relaxed);
    return any != 0;
}

bool creation_under_way() {
    for (const Launch& l : g_launches)
        if (state_of(l.state.load(std::memory_order_acquire)) == kFilling) return true;
    return false;
}

bool start_pending_for(int tid) {
    return any_pending_slot([tid](const Launch& l) { return l.tid == tid; });
}

void forget_pending_starts() {
    g_starts_closed.store(false, std::memory_order_relaxed);
    for (auto& word : g_pending.words) word.store(0, std::memory_order_relaxed);
    for (Launch& l : g_launches) {
        const std::uint64_t word = l.state.load(std::memory_order_relaxed);
        if (state_of(word) == kPending || state_of(word) == kWriting)
            l.state.store(word_of(use_of(word) + 1, kFree), std::memory_order_relaxed);
    }
}

}  // namespace stacksage::preload
