/* Code and data attribution of memory accesses, with a known shape: one
 * array is malloc'd in allocate_array() and first-touched, page by page, in
 * first_touch_loop() by the main thread (a serial first touch); a static
 * array is first-touched in touch_static_table(); with --threads T, a
 * second array is malloc'd in allocate_field() and first-touched by T
 * threads in parallel_touch(), each its own slice (a parallel first touch).
 * Under `stacksage run --sample=pagefault` the page faults' call sites are
 * those loops, their data objects the malloc'd blocks (allocated in
 * allocate_array and allocate_field) and the static array.
 *
 *   memory_attribution [--mib M] [--threads T]
 *
 * Built three ways (examples/CMakeLists.txt): with frame pointers, where the
 * kernel's frame-pointer chain is the call path; without, where the
 * recorder keeps a copy of the user stack for unwinding after the run; and
 * without frame pointers or debug information (functions, no lines). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STATIC_TABLE_BYTES (8u << 20)

static unsigned char g_static_table[STATIC_TABLE_BYTES];

__attribute__((noinline)) uint64_t* allocate_array(size_t bytes) {
    uint64_t* a = malloc(bytes);
    if (a == NULL) {
        perror("malloc");
        exit(1);
    }
    return a;
}

/* A store that depends on i: the compiler keeps the loop (no memset). */
__attribute__((noinline)) void first_touch_loop(uint64_t* a, size_t n) {
    for (size_t i = 0; i < n; i += 512) a[i] = i * 3 + 1;
}

__attribute__((noinline)) void touch_static_table(void) {
    for (size_t i = 0; i < STATIC_TABLE_BYTES; i += 4096) g_static_table[i] = (unsigned char)(i >> 12);
}

__attribute__((noinline)) uint64_t* allocate_field(size_t bytes) {
    uint64_t* f = malloc(bytes);
    if (f == NULL) {
        perror("malloc");
        exit(1);
    }
    return f;
}

struct slice {
    uint64_t* base;
    size_t n;
};

__attribute__((noinline)) void* parallel_touch(void* arg) {
    const struct slice* s = arg;
    for (size_t i = 0; i < s->n; i += 512) s->base[i] = i ^ 0x5a;
    return NULL;
}

/* T threads first-touch one slice each of an array of `bytes`. */
static uint64_t touch_in_parallel(size_t bytes, int threads) {
    uint64_t* field = allocate_field(bytes);
    pthread_t tids[64];
    struct slice slices[64];
    const size_t per = bytes / sizeof *field / (size_t)threads;
    for (int t = 0; t < threads; ++t) {
        slices[t].base = field + (size_t)t * per;
        slices[t].n = per;
        if (pthread_create(&tids[t], NULL, parallel_touch, &slices[t]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (int t = 0; t < threads; ++t) pthread_join(tids[t], NULL);
    uint64_t sum = 0;
    for (size_t i = 0; i < per * (size_t)threads; i += 512) sum += field[i];
    free(field);
    return sum;
}

int main(int argc, char** argv) {
    size_t mib = 32;
    int threads = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--mib M] [--threads T]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 0 || threads > 64) {
        fprintf(stderr, "%s: --threads takes 0 to 64\n", argv[0]);
        return 2;
    }
    const size_t bytes = mib << 20;
    uint64_t* a = allocate_array(bytes);
    first_touch_loop(a, bytes / sizeof *a);
    touch_static_table();
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes / sizeof *a; i += 512) sum += a[i];
    for (size_t i = 0; i < STATIC_TABLE_BYTES; i += 4096) sum += g_static_table[i];
    if (threads > 0) sum += touch_in_parallel(bytes, threads);
    printf("sum %llu\n", (unsigned long long)sum);
    free(a);
    return 0;
}
