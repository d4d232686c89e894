/* Code and data attribution of memory accesses, with a known shape: one
 * array is malloc'd in allocate_array() and first-touched, page by page, in
 * first_touch_loop(); a static array is first-touched in
 * touch_static_table(). Under `stacksage run --sample=pagefault` the page
 * faults' call sites are those two loops, their data objects the malloc'd
 * block (allocated in allocate_array) and the static array.
 *
 *   memory_attribution [--mib M]
 *
 * Built twice (examples/CMakeLists.txt): with frame pointers, where the
 * kernel's frame-pointer chain is the call path, and without, where the
 * recorder keeps a copy of the user stack for unwinding after the run. */
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

int main(int argc, char** argv) {
    size_t mib = 32;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--mib M]\n", argv[0]);
            return 2;
        }
    }
    const size_t bytes = mib << 20;
    uint64_t* a = allocate_array(bytes);
    first_touch_loop(a, bytes / sizeof *a);
    touch_static_table();
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes / sizeof *a; i += 512) sum += a[i];
    for (size_t i = 0; i < STATIC_TABLE_BYTES; i += 4096) sum += g_static_table[i];
    printf("sum %llu\n", (unsigned long long)sum);
    free(a);
    return 0;
}
