/* A program on another allocator than glibc's, which mixes the standard
 * calls the recorder interposes (malloc, calloc, realloc, reallocarray,
 * posix_memalign, aligned_alloc, memalign, free) with the allocator's own
 * (docs/RELIABILITY.md, "Programs on another allocator"):
 *
 *   built with -DWITH_JEMALLOC, linked against jemalloc: mallocx, sallocx,
 *     dallocx, malloc_usable_size and mallctl("thread.allocated");
 *   built without, run with tcmalloc in LD_PRELOAD: tc_malloc, tc_free,
 *     tc_malloc_size and MallocExtension_GetNumericProperty, found with dlsym.
 *
 * Each block must be the allocator's: its size query answers for it (a
 * foreign block makes tcmalloc abort, jemalloc answer nonsense), its own
 * free takes it, and its statistics grow by a large malloc. From several
 * threads at once; exits 1 with a message at the first difference, 2 when
 * tcmalloc is not loaded. Prints the number of large blocks (1 MiB and
 * more) it allocated through the standard calls, those the recorder should
 * track while sampling.
 *
 *   foreign_allocator [--threads N] [--rounds R] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WITH_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

static int g_rounds = 50;

#define CHECK(cond, what)                                     \
    do {                                                      \
        if (!(cond)) {                                        \
            fprintf(stderr, "foreign_allocator: %s\n", what); \
            exit(1);                                          \
        }                                                     \
    } while (0)

#ifdef WITH_JEMALLOC
static const char* const kAllocator = "jemalloc";
static size_t own_size(void* p) { return sallocx(p, 0); }
static void* own_alloc(size_t n) { return mallocx(n, 0); }
static void own_free(void* p) { dallocx(p, 0); }
/* Bytes this thread has had from jemalloc. */
static uint64_t allocated_bytes(void) {
    uint64_t v = 0;
    size_t len = sizeof v;
    CHECK(mallctl("thread.allocated", &v, &len, NULL, 0) == 0, "mallctl(thread.allocated)");
    return v;
}
static int load_allocator(void) { return 1; }
#else
static const char* const kAllocator = "tcmalloc";
static size_t (*tc_malloc_size_fn)(void*);
static void* (*tc_malloc_fn)(size_t);
static void (*tc_free_fn)(void*);
static int (*tc_property_fn)(const char*, size_t*);
static size_t own_size(void* p) { return tc_malloc_size_fn(p); }
static void* own_alloc(size_t n) { return tc_malloc_fn(n); }
static void own_free(void* p) { tc_free_fn(p); }
/* Bytes in use in the whole process (called while one thread runs). */
static uint64_t allocated_bytes(void) {
    size_t v = 0;
    CHECK(tc_property_fn("generic.current_allocated_bytes", &v), "MallocExtension_GetNumericProperty");
    return v;
}
static int load_allocator(void) {
    tc_malloc_size_fn = (size_t (*)(void*))dlsym(RTLD_DEFAULT, "tc_malloc_size");
    tc_malloc_fn = (void* (*)(size_t))dlsym(RTLD_DEFAULT, "tc_malloc");
    tc_free_fn = (void (*)(void*))dlsym(RTLD_DEFAULT, "tc_free");
    tc_property_fn = (int (*)(const char*, size_t*))dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
    return tc_malloc_size_fn && tc_malloc_fn && tc_free_fn && tc_property_fn;
}
#endif

/* The block is the allocator's, at least n bytes, usable to its last byte. */
static void check_block(unsigned char* p, size_t n, const char* what) {
    CHECK(p != NULL, what);
    CHECK(own_size(p) >= n, what);
    CHECK(malloc_usable_size(p) >= n, what);
    p[0] = 1;
    p[n - 1] = 2;
}

static void* work(void* arg) {
    long* large = arg;
    for (int i = 0; i < g_rounds; ++i) {
        const size_t big = (size_t)((i % 3) + 1) << 20, small = (size_t)(i % 200) + 1;
        /* Standard calls, the allocator's size query and free. */
        unsigned char* p = malloc(small);
        check_block(p, small, "malloc'd block is not the allocator's");
        own_free(p);
        unsigned char* b = malloc(big);
        check_block(b, big, "large malloc'd block is not the allocator's");
        memset(b, 3, big); /* first touch: page faults on a tracked block */
        b = realloc(b, big * 2);
        CHECK(b != NULL && b[0] == 3 && b[big - 1] == 3, "realloc lost the contents");
        check_block(b, big * 2, "realloc'd block is not the allocator's");
        unsigned char* z = calloc(big / 8, 8);
        check_block(z, big, "calloc'd block is not the allocator's");
        z[0] = 0;
        z[big - 1] = 0;
        for (size_t k = 0; k < big; k += 4096) CHECK(z[k] == 0, "calloc's zeroes");
        void* q = NULL;
        CHECK(posix_memalign(&q, 4096, big) == 0 && ((uintptr_t)q & 4095) == 0, "posix_memalign");
        check_block(q, big, "posix_memalign's block is not the allocator's");
        unsigned char* a = aligned_alloc(64, big);
        CHECK(((uintptr_t)a & 63) == 0, "aligned_alloc's alignment");
        check_block(a, big, "aligned_alloc's block is not the allocator's");
        unsigned char* m = memalign(256, small);
        CHECK(((uintptr_t)m & 255) == 0, "memalign's alignment");
        check_block(m, small, "memalign's block is not the allocator's");
        unsigned char* r = reallocarray(NULL, small, 4);
        check_block(r, small * 4, "reallocarray's block is not the allocator's");
        r = reallocarray(r, small, 8);
        check_block(r, small * 8, "reallocarray's grown block is not the allocator's");
        /* The allocator's own allocation, the standard free and realloc. */
        unsigned char* o = own_alloc(small);
        check_block(o, small, "the allocator's own block");
        o = realloc(o, small + 4096);
        check_block(o, small + 4096, "realloc of the allocator's own block");
        free(o);
        errno = 4711;
        own_free(b);  /* a large block, tracked: the allocator's free */
        free(z);
        free(q);
        own_free(a);
        free(m);
        free(r);
        free(NULL);
        CHECK(errno == 4711, "free changed errno");
        *large += 5; /* malloc, realloc, calloc, posix_memalign, aligned_alloc */
    }
    return NULL;
}

int main(int argc, char** argv) {
    int threads = 4;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) g_rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--threads N] [--rounds R]\n", argv[0]);
            return 2;
        }
    }
    if (!load_allocator()) {
        fprintf(stderr, "foreign_allocator: %s is not loaded (put libtcmalloc_minimal.so.4 in LD_PRELOAD)\n", kAllocator);
        return 2;
    }
    /* malloc is the allocator's: its statistics grow by a large block. */
    const size_t n = 8u << 20;
    const uint64_t before = allocated_bytes();
    unsigned char* probe = malloc(n);
    CHECK(probe != NULL, "malloc failed");
    probe[0] = 1;
    CHECK(allocated_bytes() - before >= n, "malloc did not go to the allocator (its statistics did not grow)");
    free(probe);

    pthread_t ids[64];
    long large[64] = {0};
    if (threads < 1 || threads > 64) threads = 4;
    for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, work, &large[i]);
    long total = 1; /* the probe */
    for (int i = 0; i < threads; ++i) {
        pthread_join(ids[i], NULL);
        total += large[i];
    }
    printf("%s: large blocks %ld\n", kAllocator, total);
    return 0;
}
