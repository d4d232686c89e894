#include "preload/sampling/code_data_attribution.hpp"

#include "preload/sampling/tracked_block_filter.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <cstring>
#include <new>

#include "preload/sampling/call_path.hpp"
#include "preload/sampling/user_registers.hpp"

namespace stacksage::sampling {

namespace {

struct State {
    AttributionOptions options;
    SiteTable sites;
    ObjectTable objects;
    MappingTable mappings;
    BlockTable blocks;
    StaticSymbols symbols;
    std::atomic<std::uint64_t> allocations_tracked{0};
    std::atomic<std::uint64_t> objects_dropped{0};
    std::atomic<std::uint64_t> last_refresh_ns{0};
    std::int32_t unknown_object = -1;
    char maps_buffer[64 * 1024];
};

std::atomic<State*> g_state{nullptr};
void* g_memory = nullptr;
std::size_t g_memory_bytes = 0;

__attribute__((tls_model("initial-exec"))) thread_local std::uint64_t t_stack_lo = 0, t_stack_hi = 0;

constexpr std::uint64_t kRefreshEveryNs = 100'000'000;
constexpr std::uint64_t kStaticGranule = 4096;  // static objects: one per page of a module's data

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

std::size_t align64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }

// Re-reads the mappings when the last read is older than kRefreshEveryNs.
bool refresh_if_stale(State& s) {
    const std::uint64_t now = monotonic_ns();
    std::uint64_t last = s.last_refresh_ns.load(std::memory_order_relaxed);
    if (now < last + kRefreshEveryNs) return false;
    if (!s.last_refresh_ns.compare_exchange_strong(last, now)) return false;
    s.mappings.refresh(s.options.maps_path, s.maps_buffer, sizeof s.maps_buffer);
    return true;
}

// The variable holding address a of mapping m (its symbol's start, in the
// mapping of its file that holds that start), else a's 4 KiB page.
std::int32_t static_object(State& s, std::uint32_t m, std::uint64_t a) {
    const Mapping& map = s.mappings.at(m);
    const std::uint64_t at = map.file_offset + (a - map.start);
    char path[4200];
    const std::size_t n = map.path_len < sizeof path - 1 ? map.path_len : sizeof path - 1;
    std::memcpy(path, s.mappings.path(map), n);
    path[n] = '\0';
    std::uint64_t start = 0;
    if (s.symbols.variable_start(path, map.inode, at, start)) {
        const std::int32_t holder = s.mappings.find_file_offset(map, start);
        return s.objects.intern(ObjectKind::Static, holder >= 0 ? holder : static_cast<std::int32_t>(m), start);
    }
    return s.objects.intern(ObjectKind::Static, static_cast<std::int32_t>(m), at & ~(kStaticGranule - 1));
}

std::int32_t object_of(State& s, const SampleRecord& r, const SampleContext& c) {
    const std::uint64_t a = r.addr;
    if (a == 0) return s.unknown_object;
    std::int32_t id = s.blocks.find(a, c.time_is_monotonic ? r.time : 0);
    if (id >= 0) return id;
    if (c.stack_hi > c.stack_lo && a >= c.stack_lo && a < c.stack_hi)
        id = s.objects.intern(ObjectKind::Stack, -1, static_cast<std::uint64_t>(c.tid));
    else if (c.other_stack_hi > c.other_stack_lo && a >= c.other_stack_lo && a < c.other_stack_hi)
        id = s.objects.intern(ObjectKind::Stack, -1, static_cast<std::uint64_t>(c.other_tid));
    else {
        std::int32_t m = s.mappings.find(a);
        if (m < 0 && c.may_refresh_mappings && refresh_if_stale(s)) m = s.mappings.find(a);
        // A fault on the page of the faulting instruction (or the next, for
        // one that straddles two) in executable code is the instruction's
        // own fetch: code being paged in, no data object.
        const bool fetch = m >= 0 && s.mappings.at(static_cast<std::uint32_t>(m)).executable && r.ip != 0 &&
                           a - (r.ip & ~(kStaticGranule - 1)) < 2 * kStaticGranule;
        if (m >= 0 && !fetch && s.mappings.at(static_cast<std::uint32_t>(m)).kind == ModuleKind::File) {
            id = static_object(s, static_cast<std::uint32_t>(m), a);
        } else {
            return s.unknown_object;
        }
    }
    if (id < 0) s.objects_dropped.fetch_add(1, std::memory_order_relaxed);
    return id;
}

}  // namespace

bool attribution_start(const AttributionOptions& options) {
    if (!options.enabled) return false;
    const std::uint32_t stack_bytes = kUserRegistersKnown ? (options.stack_bytes & ~7u) : 0;
    const std::size_t state_bytes = align64(sizeof(State));
    const std::size_t sites_bytes = align64(SiteTable::bytes_for(kSiteCapacity, kStackCopies, stack_bytes));
    const std::size_t objects_bytes = align64(ObjectTable::bytes_for(kObjectCapacity));
    const std::size_t symbols_bytes = align64(StaticSymbols::bytes_for());
    const std::size_t bytes = state_bytes + sites_bytes + objects_bytes + symbols_bytes;
    void* memory = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) return false;
    auto* base = static_cast<unsigned char*>(memory);
    State* s = new (base) State();
    s->options = options;
    s->options.stack_bytes = stack_bytes;
    s->sites.init_zeroed(base + state_bytes, kSiteCapacity, kStackCopies, stack_bytes);
    s->objects.init_zeroed(base + state_bytes + sites_bytes, kObjectCapacity);
    s->symbols.init(base + state_bytes + sites_bytes + objects_bytes);
    s->unknown_object = s->objects.intern(ObjectKind::Unknown, -1, 0);
    s->mappings.exclude_directory(options.own_files_dir);
    s->mappings.refresh(options.maps_path, s->maps_buffer, sizeof s->maps_buffer);
    s->last_refresh_ns.store(monotonic_ns());
    g_memory = memory;
    g_memory_bytes = bytes;
    g_state.store(s, std::memory_order_release);
    g_tracked_min_bytes.store(options.object_min_bytes == 0 ? 1 : options.object_min_bytes,
                              std::memory_order_release);
    std::uint64_t lo = 0, hi = 0;
    if (current_thread_stack(lo, hi)) attribution_set_thread_stack(lo, hi);
    return true;
}

bool attribution_active() { return g_state.load(std::memory_order_acquire) != nullptr; }

void attribution_stop_tracking() { g_tracked_min_bytes.store(0, std::memory_order_release); }

void attribution_after_fork_child() {
    State* s = g_state.load(std::memory_order_acquire);
    if (s == nullptr) return;
    s->blocks.reset_lock();
    s->mappings.reset_lock();
    s->symbols.reset_lock();
}

void attribution_reset_for_tests() {
    g_tracked_min_bytes.store(0);
    g_tracked_block_filter.clear();
    State* s = g_state.exchange(nullptr);
    if (s != nullptr) {
        s->~State();
        ::munmap(g_memory, g_memory_bytes);
    }
    g_memory = nullptr;
    t_stack_lo = t_stack_hi = 0;
}

void attribution_set_thread_stack(std::uint64_t lo, std::uint64_t hi) {
    t_stack_lo = lo;
    t_stack_hi = hi;
}

bool current_thread_stack(std::uint64_t& lo, std::uint64_t& hi) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return false;
    void* addr = nullptr;
    std::size_t size = 0;
    const bool ok = pthread_attr_getstack(&attr, &addr, &size) == 0 && addr != nullptr;
    pthread_attr_destroy(&attr);
    if (!ok) return false;
    lo = reinterpret_cast<std::uint64_t>(addr);
    hi = lo + size;
    return true;
}

SampleAttribution attribute_sample(const SampleRecord& r, const SampleContext& c) {
    SampleAttribution out;
    State* s = g_state.load(std::memory_order_acquire);
    if (s == nullptr) return out;
    std::uint64_t frames[kMaxSiteFrames];
    auto executable = [s](std::uint64_t a) { return s->mappings.executable(a); };
    CallPath path = user_call_path(r, frames, kMaxSiteFrames, executable);
    // A return address in no known code: the program may have loaded some since.
    if (!path.complete && path.nframes + 1 < r.callchain_nr && c.may_refresh_mappings && refresh_if_stale(*s))
        path = user_call_path(r, frames, kMaxSiteFrames, executable);
    // An incomplete chain is keyed by what it has of real return addresses
    // (often none): a copied stack tells the rest, where the site gets one.
    const Unwind unwind = path.complete                     ? Unwind::Callchain
                          : s->sites.stack_bytes() > 0 ? Unwind::Stack
                                                       : Unwind::None;
    out.site = s->sites.intern(r.ip, frames, path.nframes, unwind, c.stack_only ? 0 : 1);
    // A copy only from samples that carry a whole one (not just the top of
    // the stack every page fault keeps).
    if (unwind == Unwind::Stack && r.stack != nullptr && r.regs_abi != 0 && r.stack_size > kTopOfStackBytes &&
        s->sites.wants_stack(out.site))
        s->sites.keep_stack(out.site, r.reg_ip, r.reg_sp, r.reg_bp, r.stack,
                            r.stack_dyn_size ? r.stack_dyn_size : r.stack_size);
    if (c.with_object) out.object = object_of(*s, r, c);
    return out;
}

bool track_allocation(const void* p, std::uint64_t bytes, ObjectKind kind, const void* frame) {
    State* s = g_state.load(std::memory_order_acquire);
    if (s == nullptr || p == nullptr) return false;
    // The call path: the interposer's return address, then the frame-pointer
    // chain as far as it stays inside this thread's stack and returns into code.
    std::uint64_t frames[kMaxSiteFrames + 1];
    std::uint32_t n = 0;
    const auto* fp = static_cast<const std::uint64_t*>(frame);
    frames[n++] = fp[1];
    const std::uint64_t lo = reinterpret_cast<std::uint64_t>(&frames), hi = t_stack_hi;
    constexpr std::uint32_t kWalk = 8;
    auto next = reinterpret_cast<const std::uint64_t*>(fp[0]);
    while (n < kWalk) {
        const auto at = reinterpret_cast<std::uint64_t>(next);
        if (hi == 0 || at < lo || at + 16 > hi || (at & 7) != 0 || at <= reinterpret_cast<std::uint64_t>(fp)) break;
        const std::uint64_t ret = next[1];
        if (!s->mappings.executable(ret)) break;
        frames[n++] = ret;
        fp = next;
        next = reinterpret_cast<const std::uint64_t*>(next[0]);
    }
    // ip: the return address into the allocating code; then its callers.
    const std::int32_t site = s->sites.intern(frames[0], frames + 1, n - 1, Unwind::Callchain, 1);
    const std::int32_t object = site >= 0 ? s->objects.intern(kind, site, 0) : -1;
    if (object < 0 || !s->blocks.add(reinterpret_cast<std::uint64_t>(p), bytes, object, monotonic_ns())) {
        s->objects_dropped.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    s->objects.add_block(object, bytes);
    s->allocations_tracked.fetch_add(1, std::memory_order_relaxed);
    return true;
}

bool untrack_block(const void* p) {
    State* s = g_state.load(std::memory_order_acquire);
    if (s == nullptr || p == nullptr || s->blocks.live() == 0) return false;
    return s->blocks.mark_freed(reinterpret_cast<std::uint64_t>(p), monotonic_ns());
}

void untrack_range(const void* p, std::uint64_t bytes) {
    State* s = g_state.load(std::memory_order_acquire);
    if (s == nullptr || s->blocks.live() == 0) return;
    s->blocks.mark_unmapped(reinterpret_cast<std::uint64_t>(p), bytes, monotonic_ns());
}

const SiteTable& attribution_sites() { return g_state.load()->sites; }
const ObjectTable& attribution_objects() { return g_state.load()->objects; }
MappingTable& attribution_mappings() { return g_state.load()->mappings; }
std::uint64_t attribution_allocations_tracked() {
    State* s = g_state.load();
    return s ? s->allocations_tracked.load() : 0;
}
std::uint64_t attribution_objects_dropped() {
    State* s = g_state.load();
    return s ? s->objects_dropped.load() : 0;
}
std::uint64_t attribution_min_block_bytes() {
    State* s = g_state.load();
    return s ? s->options.object_min_bytes : 0;
}
void attribution_refresh_mappings() {
    State* s = g_state.load();
    if (s == nullptr) return;
    s->mappings.refresh(s->options.maps_path, s->maps_buffer, sizeof s->maps_buffer);
    s->last_refresh_ns.store(monotonic_ns());
}

}  // namespace stacksage::sampling
