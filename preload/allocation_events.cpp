// The allocation calls, interposed to give large blocks a data object
// (docs/sample-file.md, "Code and data"): malloc, calloc, realloc,
// reallocarray, free, posix_memalign, aligned_alloc, memalign, and
// anonymous mmap/munmap.
//
// They forward to the next definition after the recorder
// (preload/next_allocator.hpp): glibc's, or jemalloc's / tcmalloc's when the
// program links or preloads one, so the application's blocks, their errno
// and their failures are its own allocator's, and that allocator's own calls
// (sallocx, dallocx, malloc_usable_size) see its own blocks. Only while
// sampling tracks objects (g_tracked_min_bytes != 0), a block of at least
// that many bytes is recorded with its call site (track_allocation); free()
// of any other block costs one load of the threshold and one of the
// TrackedBlockFilter, which reads nothing of the allocator's: the filter
// that keeps small frees at the allocator's speed
// (bench/allocation_overhead.cpp).
//
// This file is built with frame pointers: the allocation site's walk
// starts at the interposer's own frame.
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "preload/next_allocator.hpp"
#include "preload/real_functions.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/sampling/recorder_image.hpp"
#include "preload/sampling/tracked_block_filter.hpp"

namespace {

using stacksage::preload::bootstrap_allocate;
using stacksage::preload::bootstrap_reallocate;
using stacksage::preload::in_bootstrap_arena;
using stacksage::preload::next_allocator;
using stacksage::preload::NextAllocator;
using stacksage::sampling::g_tracked_block_filter;
using stacksage::sampling::g_tracked_min_bytes;
using stacksage::sampling::ObjectKind;

std::uint64_t threshold() { return g_tracked_min_bytes.load(std::memory_order_relaxed); }

// Out of line: the common (untracked) path stays a load and a branch.
__attribute__((noinline)) void track(const void* p, std::uint64_t bytes, const void* frame) {
    const int saved = errno;
    if (stacksage::sampling::track_allocation(p, bytes, ObjectKind::Heap, frame)) g_tracked_block_filter.add(p);
    errno = saved;
}

__attribute__((noinline)) void untrack(const void* p) {
    const int saved = errno;
    if (stacksage::sampling::untrack_block(p)) g_tracked_block_filter.remove(p);
    errno = saved;
}

// Whether p may be a tracked block (one load; nullptr never is).
bool maybe_tracked(const void* p) { return p != nullptr && g_tracked_block_filter.may_hold(p); }

// After a successful or failed reallocation of old into p (n bytes).
void retrack(void* old, bool old_maybe_tracked, void* p, size_t n, std::uint64_t min, const void* frame) {
    // realloc(old, 0) frees old; a failed realloc leaves it as it was.
    if (old_maybe_tracked && (p != nullptr || n == 0)) untrack(old);
    if (p != nullptr && n >= min) track(p, n, frame);
}

// realloc while this thread resolves the allocator: only arena blocks exist for it.
void* resolving_realloc(void* old, size_t n) {
    if (old == nullptr) return bootstrap_allocate(n);
    errno = ENOMEM;
    return nullptr;
}

}  // namespace

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT void* malloc(size_t n) {
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) return bootstrap_allocate(n);
    void* p = next->malloc(n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT void* calloc(size_t count, size_t size) {
    const NextAllocator* next = next_allocator();
    size_t n = 0;
    if (__builtin_expect(next == nullptr, 0)) {
        if (__builtin_mul_overflow(count, size, &n)) {
            errno = ENOMEM;
            return nullptr;
        }
        return bootstrap_allocate(n);  // never handed out before: zero
    }
    void* p = next->calloc(count, size);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && p != nullptr, 0) && !__builtin_mul_overflow(count, size, &n) && n >= min)
        track(p, n, __builtin_frame_address(0));
    return p;
}

namespace {

// realloc's work, in the interposer's own frame (frame: where the
// allocation site's walk starts).
__attribute__((always_inline)) inline void* reallocate(void* old, size_t n, const void* frame) {
    if (__builtin_expect(in_bootstrap_arena(old), 0)) return bootstrap_reallocate(old, n);
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) return resolving_realloc(old, n);
    const std::uint64_t min = threshold();
    const bool old_maybe_tracked = __builtin_expect(min != 0, 0) && maybe_tracked(old);
    void* p = next->realloc(old, n);
    if (__builtin_expect(min != 0, 0)) retrack(old, old_maybe_tracked, p, n, min, frame);
    return p;
}

}  // namespace

STACKSAGE_EXPORT void* realloc(void* old, size_t n) { return reallocate(old, n, __builtin_frame_address(0)); }

// Through the next realloc, not the next reallocarray: an allocator that
// defines no reallocarray (jemalloc) would otherwise get glibc's, which
// reallocates with glibc's realloc.
STACKSAGE_EXPORT void* reallocarray(void* old, size_t count, size_t size) {
    size_t n = 0;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return nullptr;
    }
    return reallocate(old, n, __builtin_frame_address(0));
}

STACKSAGE_EXPORT void free(void* p) {
    if (__builtin_expect(in_bootstrap_arena(p), 0)) return;  // the arena is never reused
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) return;  // only arena blocks exist yet
    // Before the allocator has it back: another thread may be given the same address.
    if (__builtin_expect(threshold() != 0, 0) && maybe_tracked(p)) untrack(p);
    next->free(p);
}

STACKSAGE_EXPORT void* memalign(size_t alignment, size_t n) {
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) return bootstrap_allocate(n, alignment);
    void* p = next->memalign(alignment, n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT void* aligned_alloc(size_t alignment, size_t n) {
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) return bootstrap_allocate(n, alignment);
    void* p = next->aligned_alloc(alignment, n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT int posix_memalign(void** out, size_t alignment, size_t n) {
    const NextAllocator* next = next_allocator();
    if (__builtin_expect(next == nullptr, 0)) {
        if (alignment % sizeof(void*) != 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
        void* p = bootstrap_allocate(n, alignment);
        if (p == nullptr) return ENOMEM;
        *out = p;
        return 0;
    }
    const int saved = errno;  // posix_memalign reports in its result, errno untouched
    const int rc = next->posix_memalign(out, alignment, n);
    errno = saved;
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && rc == 0, 0)) track(*out, n, __builtin_frame_address(0));
    return rc;
}

namespace {

void* forward_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t offset, const void* frame) {
    auto real_mmap = stacksage::preload::real::mmap();
    if (real_mmap == nullptr) {
        errno = ENOSYS;
        return MAP_FAILED;
    }
    void* p = real_mmap(addr, len, prot, flags, fd, offset);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0, 0) && p != MAP_FAILED && len >= min && (flags & MAP_ANONYMOUS) && prot != PROT_NONE) {
        // The recorder's own tables, and the allocator's own arenas (their
        // blocks are tracked as malloc'd), are not the application's data.
        const auto* fp = static_cast<const std::uint64_t*>(frame);
        if (!stacksage::sampling::recorder_image().contains(fp[1]) && !stacksage::preload::in_allocator_image(fp[1])) {
            const int saved = errno;
            stacksage::sampling::track_allocation(p, len, ObjectKind::Mmap, frame);
            errno = saved;
        }
    }
    return p;
}

}  // namespace

STACKSAGE_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t offset) {
    return forward_mmap(addr, len, prot, flags, fd, offset, __builtin_frame_address(0));
}

STACKSAGE_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t offset) {
    return forward_mmap(addr, len, prot, flags, fd, offset, __builtin_frame_address(0));
}

STACKSAGE_EXPORT int munmap(void* addr, size_t len) {
    auto real_munmap = stacksage::preload::real::munmap();
    if (real_munmap == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    const int rc = real_munmap(addr, len);
    if (__builtin_expect(threshold() != 0, 0) && rc == 0) {
        const int saved = errno;
        stacksage::sampling::untrack_range(addr, len);
        errno = saved;
    }
    return rc;
}
