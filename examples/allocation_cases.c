/* Every allocation call the recorder interposes while sampling tracks data
 * objects (docs/sample-file.md, "Code and data"), from several threads at
 * once, with the semantics a program relies on checked as it goes: each
 * block usable to its last byte, calloc's zeroes, realloc keeping the
 * contents, posix_memalign's alignment and EINVAL, reallocarray's overflow
 * check, errno untouched by a successful free, mmap/munmap. Exits 1 with a
 * message at the first difference; prints the number of large blocks it
 * allocated (those the recorder should have tracked).
 *
 *   allocation_cases [--threads N] [--rounds R] */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int g_rounds = 200;

#define CHECK(cond, what)                                    \
    do {                                                     \
        if (!(cond)) {                                       \
            fprintf(stderr, "allocation_cases: %s\n", what); \
            exit(1);                                         \
        }                                                    \
    } while (0)

static void* work(void* arg) {
    (void)arg;
    for (int i = 0; i < g_rounds; ++i) {
        const size_t n = (size_t)((i % 3) + 1) << 20;
        unsigned char* p = malloc(n);
        CHECK(p != NULL, "malloc failed");
        p[0] = 1;
        p[n - 1] = 2;
        p = realloc(p, n * 2);
        CHECK(p != NULL && p[0] == 1 && p[n - 1] == 2, "realloc lost the contents");
        p[n * 2 - 1] = 3;
        void* q = NULL;
        CHECK(posix_memalign(&q, 4096, n) == 0 && ((uintptr_t)q & 4095) == 0, "posix_memalign");
        memset(q, 7, 4096);
        unsigned char* z = calloc(n / 8, 8);
        CHECK(z != NULL && z[n / 2] == 0 && z[n - 1] == 0, "calloc's zeroes");
        unsigned char* a = aligned_alloc(64, n);
        CHECK(a != NULL && ((uintptr_t)a & 63) == 0, "aligned_alloc");
        a[n - 1] = 4;
        unsigned char* m = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(m != MAP_FAILED, "mmap");
        m[n - 1] = 5;
        char* small = malloc(24);
        CHECK(small != NULL, "small malloc");
        strcpy(small, "small");
        errno = 4711;
        free(p);
        free(q);
        free(z);
        free(a);
        free(small);
        free(NULL);
        CHECK(errno == 4711, "free changed errno");
        CHECK(munmap(m, n) == 0, "munmap");
        void* bad = NULL;
        CHECK(posix_memalign(&bad, 3, 10) == EINVAL && errno == 4711, "posix_memalign(3) is EINVAL, errno untouched");
        volatile size_t huge = SIZE_MAX / 2; /* not a constant: the overflow is reallocarray's to find */
        CHECK(reallocarray(NULL, huge, 4) == NULL && errno == ENOMEM, "reallocarray overflow is ENOMEM");
        void* gone = malloc(2u << 20);
        CHECK(gone != NULL, "malloc failed");
        gone = realloc(gone, 0); /* glibc: frees it, returns NULL */
        free(gone);
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
    pthread_t ids[64];
    if (threads < 1 || threads > 64) threads = 4;
    for (int i = 0; i < threads; ++i) pthread_create(&ids[i], NULL, work, NULL);
    for (int i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
    /* Large blocks per round: malloc, realloc, posix_memalign, calloc,
     * aligned_alloc, mmap, and the malloc freed by realloc(p, 0). */
    printf("large blocks %d\n", threads * g_rounds * 7);
    return 0;
}
