// The allocation calls, interposed to give large blocks a data object
// (docs/sample-file.md, "Code and data"): malloc, calloc, realloc,
// reallocarray, free, posix_memalign, aligned_alloc, memalign, and
// anonymous mmap/munmap.
//
// They forward to glibc's own entry points (__libc_malloc and the like: no
// dlsym, which may itself allocate, on the way), so the application's
// allocations, their errno and their failures are glibc's. Only while
// sampling tracks objects (g_tracked_min_bytes != 0), a block of at least
// that many bytes is recorded with its call site (track_allocation); free()
// of any other block costs one load of the threshold and one of glibc's
// chunk header (tracked_size): the filter that keeps small frees at glibc's
// speed (bench/allocation_overhead.cpp).
//
// This file is built with frame pointers: the allocation site's walk
// starts at the interposer's own frame.
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "preload/real_functions.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/sampling/recorder_image.hpp"

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace {

using stacksage::sampling::g_tracked_min_bytes;
using stacksage::sampling::ObjectKind;

std::uint64_t threshold() { return g_tracked_min_bytes.load(std::memory_order_relaxed); }

// Out of line: the common (untracked) path stays a load and a branch.
__attribute__((noinline)) void track(const void* p, std::uint64_t bytes, ObjectKind kind, const void* frame) {
    const int saved = errno;
    stacksage::sampling::track_allocation(p, bytes, kind, frame);
    errno = saved;
}

__attribute__((noinline)) void untrack(const void* p) {
    const int saved = errno;
    stacksage::sampling::untrack_block(p);
    errno = saved;
}

// Whether glibc's chunk at p may hold min bytes: its size field, the word
// before the block (malloc/malloc.c, "struct malloc_chunk"; the low three
// bits are flags). A chunk is never smaller than what it was asked for, so
// no tracked block is missed; a larger untracked one costs a lookup. One
// load: the filter every free() goes through while tracking runs.
bool tracked_size(void* p, std::uint64_t min) {
    if (p == nullptr) return false;
    std::size_t size;
    __builtin_memcpy(&size, static_cast<const char*>(p) - sizeof size, sizeof size);
    return (size & ~std::size_t{7}) >= min;
}

}  // namespace

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT void* malloc(size_t n) {
    void* p = __libc_malloc(n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT void* calloc(size_t count, size_t size) {
    void* p = __libc_calloc(count, size);
    const std::uint64_t min = threshold();
    size_t n = 0;
    if (__builtin_expect(min != 0 && p != nullptr, 0) && !__builtin_mul_overflow(count, size, &n) && n >= min)
        track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT void* realloc(void* old, size_t n) {
    const std::uint64_t min = threshold();
    const bool old_tracked = __builtin_expect(min != 0, 0) && tracked_size(old, min);
    void* p = __libc_realloc(old, n);
    if (__builtin_expect(min != 0, 0)) {
        // realloc(old, 0) frees old; a failed realloc leaves it as it was.
        if (old_tracked && (p != nullptr || n == 0)) untrack(old);
        if (p != nullptr && n >= min) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    }
    return p;
}

STACKSAGE_EXPORT void* reallocarray(void* old, size_t count, size_t size) {
    size_t n = 0;
    if (__builtin_mul_overflow(count, size, &n)) {
        errno = ENOMEM;
        return nullptr;
    }
    const std::uint64_t min = threshold();
    const bool old_tracked = __builtin_expect(min != 0, 0) && tracked_size(old, min);
    void* p = __libc_realloc(old, n);
    if (__builtin_expect(min != 0, 0)) {
        if (old_tracked && (p != nullptr || n == 0)) untrack(old);
        if (p != nullptr && n >= min) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    }
    return p;
}

STACKSAGE_EXPORT void free(void* p) {
    const std::uint64_t min = threshold();
    // Before glibc has it back: another thread may be given the same address.
    if (__builtin_expect(min != 0, 0) && tracked_size(p, min)) untrack(p);
    __libc_free(p);
}

STACKSAGE_EXPORT void* memalign(size_t alignment, size_t n) {
    void* p = __libc_memalign(alignment, n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    return p;
}

// glibc's aligned_alloc is memalign (the same code, up to glibc 2.37).
STACKSAGE_EXPORT void* aligned_alloc(size_t alignment, size_t n) {
    void* p = __libc_memalign(alignment, n);
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min && p != nullptr, 0)) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    return p;
}

STACKSAGE_EXPORT int posix_memalign(void** out, size_t alignment, size_t n) {
    // glibc's checks: a power of two, a multiple of sizeof(void*); errno untouched.
    if (alignment % sizeof(void*) != 0 || alignment == 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    const int saved = errno;
    void* p = __libc_memalign(alignment, n);
    errno = saved;
    if (p == nullptr) return ENOMEM;
    *out = p;
    const std::uint64_t min = threshold();
    if (__builtin_expect(min != 0 && n >= min, 0)) track(p, n, ObjectKind::Heap, __builtin_frame_address(0));
    return 0;
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
        // The recorder's own tables are not the application's data.
        const auto* fp = static_cast<const std::uint64_t*>(frame);
        if (!stacksage::sampling::recorder_image().contains(fp[1])) track(p, len, ObjectKind::Mmap, frame);
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
