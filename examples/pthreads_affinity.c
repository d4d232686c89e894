/* Plain pthreads that place themselves: a thread that binds itself with
 * sched_setaffinity, one created with an affinity in its attributes (the way
 * libgomp binds), and the main thread re-binding the first one with
 * pthread_setaffinity_np and naming it. Uses only CPUs it was given, so it
 * runs the same under taskset. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int first_cpu, last_cpu;
static pthread_barrier_t bound;

static void* binds_itself(void* unused) {
    (void)unused;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first_cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) perror("sched_setaffinity");
    pthread_barrier_wait(&bound); /* main re-binds us now */
    pthread_barrier_wait(&bound);
    /* Long enough that the recorder's thread_end carries its CPU time and
     * end mask: threads under a millisecond go without them. */
    usleep(3000);
    return NULL;
}

static void* bound_by_attr(void* unused) {
    (void)unused;
    return NULL;
}

int main(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
    first_cpu = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) {
            if (first_cpu < 0) first_cpu = c;
            last_cpu = c;
        }

    pthread_barrier_init(&bound, NULL, 2);
    pthread_t a, b;
    pthread_create(&a, NULL, binds_itself, NULL);
    pthread_setname_np(a, "binds-itself");

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    cpu_set_t last;
    CPU_ZERO(&last);
    CPU_SET(last_cpu, &last);
    pthread_attr_setaffinity_np(&attr, sizeof last, &last);
    pthread_create(&b, &attr, bound_by_attr, NULL);
    pthread_attr_destroy(&attr);

    pthread_barrier_wait(&bound);
    cpu_set_t both;
    CPU_ZERO(&both);
    CPU_SET(first_cpu, &both);
    CPU_SET(last_cpu, &both);
    if (pthread_setaffinity_np(a, sizeof both, &both) != 0) fprintf(stderr, "pthread_setaffinity_np failed\n");
    pthread_barrier_wait(&bound);

    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("pthreads_affinity: cpus %d and %d\n", first_cpu, last_cpu);
    return 0;
}
