/* Two threads whose placement changes while they run: they compute with the
 * process's mask (free) and, bound by their own affinity calls, on one CPU.
 * The first thread binds itself with pthread_setaffinity_np, the second with
 * sched_setaffinity, at the same moment (a barrier). "free-first" computes
 * free, then bound (both on one CPU: over-subscribed for the bound part);
 * "bound-first" computes bound, then unbinds and computes free. Phases are
 * measured in wall-clock time, so their lengths do not depend on the CPU
 * time the threads won on a loaded machine. The main thread only creates and
 * joins.
 * Usage: rebind_midway [free_seconds] [bound_seconds] [free-first|bound-first]
 *        (default 1 s, 1 s, free-first); the CPU bound to is the first of the
 *        process's mask. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double free_seconds = 1.0, bound_seconds = 1.0;
static int bound_first = 0;
static cpu_set_t free_mask, one_cpu;
static pthread_barrier_t together;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void compute_for(double length) {
    const double end = now() + length;
    volatile double sum = 0;
    while (now() < end)
        for (int i = 1; i <= 1000; ++i) sum += 1.0 / i;
}

/* Thread 0 calls pthread_setaffinity_np on itself, thread 1 sched_setaffinity. */
static void set_mask(long which, const cpu_set_t* mask) {
    const int rc = which == 0 ? pthread_setaffinity_np(pthread_self(), sizeof *mask, mask)
                              : sched_setaffinity(0, sizeof *mask, mask);
    if (rc != 0) perror(which == 0 ? "pthread_setaffinity_np" : "sched_setaffinity");
}

static void* worker(void* arg) {
    const long which = (long)arg;
    pthread_barrier_wait(&together);
    if (bound_first) {
        set_mask(which, &one_cpu);
        compute_for(bound_seconds);
        pthread_barrier_wait(&together);
        set_mask(which, &free_mask);
        compute_for(free_seconds);
    } else {
        compute_for(free_seconds);
        pthread_barrier_wait(&together);
        set_mask(which, &one_cpu);
        compute_for(bound_seconds);
    }
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1) free_seconds = atof(argv[1]);
    if (argc > 2) bound_seconds = atof(argv[2]);
    if (argc > 3) bound_first = strcmp(argv[3], "bound-first") == 0;
    if (free_seconds < 0 || bound_seconds < 0 || (argc > 3 && !bound_first && strcmp(argv[3], "free-first") != 0)) {
        fprintf(stderr, "usage: rebind_midway [free_seconds] [bound_seconds] [free-first|bound-first]\n");
        return 2;
    }
    if (sched_getaffinity(0, sizeof free_mask, &free_mask) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    CPU_ZERO(&one_cpu);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
        if (CPU_ISSET(cpu, &free_mask)) {
            CPU_SET(cpu, &one_cpu);
            break;
        }
    pthread_barrier_init(&together, NULL, 2);
    pthread_t threads[2];
    for (long i = 0; i < 2; ++i)
        if (pthread_create(&threads[i], NULL, worker, (void*)i) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            return 1;
        }
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&together);
    return 0;
}
