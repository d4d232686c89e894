#include "preload/next_allocator.hpp"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include <cstdint>

#include "preload/sampling/recorder_image.hpp"

extern "C" {
// glibc's own entry points: the fallback when no later object defines one.
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace stacksage::preload {

namespace {

std::atomic<size_t> g_arena_used{0};

// Each arena block is preceded by its size (for realloc's copy).
constexpr size_t kHeader = 16;

// Whether this thread is inside dlsym for the allocator: its allocations go
// to the arena (initial-exec TLS: no allocation to reach it).
thread_local bool t_resolving = false;

void* next_symbol(const char* name, void* fallback) {
    void* p = dlsym(RTLD_NEXT, name);
    return p != nullptr ? p : fallback;
}

int libc_posix_memalign(void** out, size_t alignment, size_t n) {
    if (alignment % sizeof(void*) != 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* p = __libc_memalign(alignment, n);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
}

}  // namespace

const NextAllocator* resolve_next_allocator() {
    if (t_resolving) return nullptr;
    // Each resolver fills its own table (in the arena, never freed) and the
    // first to finish publishes it: no thread waits on another, so a fork
    // in the middle leaves nothing half done.
    auto* table = static_cast<NextAllocator*>(bootstrap_allocate(sizeof(NextAllocator)));
    if (table == nullptr) return nullptr;
    t_resolving = true;
    const int saved = errno;  // dlsym's errors are not the application's
    table->malloc = reinterpret_cast<void* (*)(size_t)>(next_symbol("malloc", reinterpret_cast<void*>(&__libc_malloc)));
    table->calloc =
        reinterpret_cast<void* (*)(size_t, size_t)>(next_symbol("calloc", reinterpret_cast<void*>(&__libc_calloc)));
    table->realloc =
        reinterpret_cast<void* (*)(void*, size_t)>(next_symbol("realloc", reinterpret_cast<void*>(&__libc_realloc)));
    table->free = reinterpret_cast<void (*)(void*)>(next_symbol("free", reinterpret_cast<void*>(&__libc_free)));
    table->memalign =
        reinterpret_cast<void* (*)(size_t, size_t)>(next_symbol("memalign", reinterpret_cast<void*>(&__libc_memalign)));
    table->aligned_alloc = reinterpret_cast<void* (*)(size_t, size_t)>(
        next_symbol("aligned_alloc", reinterpret_cast<void*>(&__libc_memalign)));
    table->posix_memalign = reinterpret_cast<int (*)(void**, size_t, size_t)>(
        next_symbol("posix_memalign", reinterpret_cast<void*>(&libc_posix_memalign)));
    errno = saved;
    t_resolving = false;
    const NextAllocator* expected = nullptr;
    if (g_next_allocator.compare_exchange_strong(expected, table, std::memory_order_acq_rel)) return table;
    return expected;  // another thread's table: the same pointers
}

void* bootstrap_allocate(size_t bytes, size_t alignment) {
    if (alignment < 16) alignment = 16;
    if (bytes > kBootstrapArenaBytes || alignment > kBootstrapArenaBytes) {
        errno = ENOMEM;
        return nullptr;
    }
    const auto base = reinterpret_cast<std::uintptr_t>(g_bootstrap_arena);
    size_t used = g_arena_used.load(std::memory_order_relaxed);
    for (;;) {
        const std::uintptr_t start = (base + used + kHeader + alignment - 1) & ~(std::uintptr_t{alignment} - 1);
        const size_t end = start - base + ((bytes + 15) & ~size_t{15});
        if (end > kBootstrapArenaBytes) {
            errno = ENOMEM;
            return nullptr;
        }
        if (g_arena_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
            auto* p = reinterpret_cast<unsigned char*>(start);
            memcpy(p - sizeof bytes, &bytes, sizeof bytes);
            return p;  // never handed out before: still zero
        }
    }
}

namespace {
std::atomic<std::uint64_t> g_allocator_start{0}, g_allocator_end{0};
}  // namespace

void note_allocator_image() {
    const NextAllocator* next = next_allocator();
    if (next == nullptr) return;
    const sampling::AddressRange image = sampling::library_image_of(reinterpret_cast<const void*>(next->malloc));
    g_allocator_end.store(0, std::memory_order_release);  // never a new start with an old end
    g_allocator_start.store(image.start, std::memory_order_release);
    g_allocator_end.store(image.end, std::memory_order_release);
}

bool in_allocator_image(std::uint64_t address) {
    return address >= g_allocator_start.load(std::memory_order_acquire) &&
           address < g_allocator_end.load(std::memory_order_acquire);
}

void* bootstrap_reallocate(void* old, size_t bytes) {
    size_t old_bytes;
    memcpy(&old_bytes, static_cast<unsigned char*>(old) - sizeof old_bytes, sizeof old_bytes);
    const NextAllocator* next = next_allocator();
    void* p = next != nullptr ? next->malloc(bytes) : bootstrap_allocate(bytes);
    if (p != nullptr) memcpy(p, old, old_bytes < bytes ? old_bytes : bytes);
    return p;
}

}  // namespace stacksage::preload
