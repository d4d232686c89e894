/* Plain pthreads that compute for a while and are joined: with more threads
 * than CPUs, each gets a small share of one and waits for it the rest of
 * the time (starved, not idle). The main thread creates and joins; given
 * main_seconds, it first computes alone that long (the common pattern of a
 * serial phase, then one worker per core while the main thread waits).
 * With "cond", the main thread waits for the workers on a condition
 * variable (as thread pools do), which the recorder does not intercept,
 * and joins them once they are done.
 * Usage: busy_threads [threads] [seconds] [main_seconds] [join|cond]
 *        (default 24 threads, 1 s, 0 s, join) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double seconds = 1.0;
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done = 0;

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

static void* compute(void* arg) {
    (void)arg;
    compute_for(seconds);
    pthread_mutex_lock(&done_lock);
    ++done;
    pthread_cond_signal(&done_cond);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

int main(int argc, char** argv) {
    const int count = argc > 1 ? atoi(argv[1]) : 24;
    if (argc > 2) seconds = atof(argv[2]);
    const double main_seconds = argc > 3 ? atof(argv[3]) : 0;
    const int wait_on_cond = argc > 4 && strcmp(argv[4], "cond") == 0;
    if (count < 1 || count > 1024 || seconds <= 0 || main_seconds < 0 ||
        (argc > 4 && !wait_on_cond && strcmp(argv[4], "join") != 0)) {
        fprintf(stderr, "usage: busy_threads [threads 1-1024] [seconds > 0] [main_seconds >= 0] [join|cond]\n");
        return 2;
    }
    if (main_seconds > 0) compute_for(main_seconds);
    pthread_t* threads = calloc((size_t)count, sizeof *threads);
    if (threads == NULL) return 1;
    int created = 0;
    for (; created < count; ++created)
        if (pthread_create(&threads[created], NULL, compute, NULL) != 0) break;
    if (wait_on_cond) {
        pthread_mutex_lock(&done_lock);
        while (done < created) pthread_cond_wait(&done_cond, &done_lock);
        pthread_mutex_unlock(&done_lock);
    }
    for (int i = 0; i < created; ++i) pthread_join(threads[i], NULL);
    free(threads);
    printf("busy_threads: %d threads computed for %.2f s\n", created, seconds);
    return created == count ? 0 : 1;
}
