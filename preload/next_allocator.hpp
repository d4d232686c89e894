// The allocator the application would have had without us: the next
// definitions of malloc & co. after the recorder's interposers
// (dlsym(RTLD_NEXT)), whichever library that is: glibc, or jemalloc /
// tcmalloc linked into the program or preloaded after the recorder. Their
// blocks must come from the allocator whose own calls (sallocx, dallocx,
// malloc_usable_size, tc_*) the application uses on them.
//
// Resolved once, on the first call. dlsym may itself allocate: while a
// thread resolves, its own allocations come from a small static bootstrap
// arena (free of an arena block does nothing, realloc of one copies it out).
// Threads resolving at once each call dlsym and store the same pointers
// (no lock to wait on, nothing a fork can leave held).
#pragma once

#include <stddef.h>

#include <atomic>
#include <cstdint>

namespace stacksage::preload {

struct NextAllocator {
    void* (*malloc)(size_t);
    void* (*calloc)(size_t, size_t);
    void* (*realloc)(void*, size_t);
    void (*free)(void*);
    void* (*memalign)(size_t, size_t);
    void* (*aligned_alloc)(size_t, size_t);
    int (*posix_memalign)(void**, size_t, size_t);
};

// nullptr until resolved.
inline std::atomic<const NextAllocator*> g_next_allocator{nullptr};

// The next allocator; nullptr only while this thread is resolving it (the
// caller then uses the bootstrap arena).
const NextAllocator* resolve_next_allocator();

inline const NextAllocator* next_allocator() {
    const NextAllocator* next = g_next_allocator.load(std::memory_order_acquire);
    return __builtin_expect(next != nullptr, 1) ? next : resolve_next_allocator();
}

// The bootstrap arena: the resolvers' tables, and what dlsym may allocate
// while it runs (glibc 2.36's allocates nothing; an error string, a scope
// array: a few hundred bytes). 64 KiB leaves room for many threads
// resolving at once.
inline constexpr size_t kBootstrapArenaBytes = 64 * 1024;
alignas(64) inline unsigned char g_bootstrap_arena[kBootstrapArenaBytes];

// Blocks aligned to max(16, alignment), zeroed, never reused. nullptr
// (errno ENOMEM) once it is spent.
void* bootstrap_allocate(size_t bytes, size_t alignment = 16);
// Inline: every free() asks.
inline bool in_bootstrap_arena(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(g_bootstrap_arena) < kBootstrapArenaBytes;
}
// realloc of an arena block: a block of the next allocator (or of the arena,
// while resolving) holding its first min(old size, bytes) bytes.
void* bootstrap_reallocate(void* old, size_t bytes);

// The loaded image of the library the next malloc is in (jemalloc's,
// tcmalloc's, glibc's; empty when the executable holds it). Its own mmap
// calls (jemalloc's extents, tcmalloc's spans) are its bookkeeping, not the
// application's data objects: the mmap interposer tracks none of them.
// Noted when sampling starts: dladdr and dl_iterate_phdr take the loader's
// lock, never to be taken inside an allocator's mmap call.
void note_allocator_image();
bool in_allocator_image(std::uint64_t address);

}  // namespace stacksage::preload
