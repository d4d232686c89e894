/* Memory placement by first touch: one thread initialises a buffer (so
 * Linux places every page on that thread's NUMA node), then several threads
 * read it. With --parallel-init each thread initialises the part it reads
 * (the usual fix). With --pin, thread i is pinned to CPU i % CPUs.
 *
 *   memory_first_touch [--threads N] [--mib M] [--passes P] [--pin] [--parallel-init]
 *
 * Under `stacksage run --sample=pagefault` the page-fault samples show which
 * thread first touched which pages, and on which node they landed. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static size_t g_bytes = 64u << 20;
static int g_threads = 2;
static int g_passes = 4;
static int g_pin = 0;
static int g_parallel_init = 0;
static char* g_buf;
static pthread_barrier_t g_initialised;

struct worker {
    int index;
    uint64_t sum;
};

static void pin(int index) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)(index % (cpus > 0 ? cpus : 1)), &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void* work(void* arg) {
    struct worker* w = arg;
    if (g_pin) pin(w->index);
    size_t slice = g_bytes / (size_t)g_threads;
    char* mine = g_buf + slice * (size_t)w->index;
    if (g_parallel_init) {
        memset(mine, w->index + 1, slice);
    } else if (w->index == 0) {
        memset(g_buf, 1, g_bytes); /* thread 0 touches everything first */
    }
    pthread_barrier_wait(&g_initialised);
    uint64_t sum = 0;
    for (int p = 0; p < g_passes; ++p)
        for (size_t i = 0; i < slice; i += 64) sum += (unsigned char)mine[i];
    w->sum = sum;
    return NULL;
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) g_threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc) g_bytes = (size_t)atol(argv[++i]) << 20;
        else if (!strcmp(argv[i], "--passes") && i + 1 < argc) g_passes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pin")) g_pin = 1;
        else if (!strcmp(argv[i], "--parallel-init")) g_parallel_init = 1;
        else {
            fprintf(stderr, "usage: %s [--threads N] [--mib M] [--passes P] [--pin] [--parallel-init]\n", argv[0]);
            return 2;
        }
    }
    if (g_threads < 1) g_threads = 1;
    g_buf = mmap(NULL, g_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g_buf == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    /* Page by page, so that first touch is visible per 4 KiB page. */
    madvise(g_buf, g_bytes, MADV_NOHUGEPAGE);
    pthread_barrier_init(&g_initialised, NULL, (unsigned)g_threads);
    pthread_t* ids = calloc((size_t)g_threads, sizeof *ids);
    struct worker* ws = calloc((size_t)g_threads, sizeof *ws);
    for (int i = 0; i < g_threads; ++i) {
        ws[i].index = i;
        pthread_create(&ids[i], NULL, work, &ws[i]);
    }
    uint64_t total = 0;
    for (int i = 0; i < g_threads; ++i) {
        pthread_join(ids[i], NULL);
        total += ws[i].sum;
    }
    printf("%d threads, %zu MiB, %s init: sum %llu\n", g_threads, g_bytes >> 20,
           g_parallel_init ? "parallel" : "serial", (unsigned long long)total);
    free(ws);
    free(ids);
    pthread_barrier_destroy(&g_initialised);
    munmap(g_buf, g_bytes);
    return 0;
}
