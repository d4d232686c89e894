/* A thread created after its creator changed its own affinity starts with
 * the new mask: the recorder hands the creator's cached mask to the new
 * thread, and every affinity call, however it is made, must make that cache
 * stale. Binds through sched_setaffinity, then through syscall(2) as LLVM's
 * OpenMP does, creating a thread after each. Uses only CPUs it was given. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

static void* nothing(void* unused) { return unused; }

static void create_and_join(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) == 0) pthread_join(t, NULL);
}

int main(void) {
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return 1;
    int first = -1, last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) {
            if (first < 0) first = c;
            last = c;
        }
    create_and_join(); /* with the whole mask */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) perror("sched_setaffinity");
    create_and_join(); /* on `last` only */
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    if (syscall(SYS_sched_setaffinity, 0, sizeof one, &one) != 0) perror("syscall(SYS_sched_setaffinity)");
    create_and_join(); /* on `first` only */
    printf("inherited_affinity: cpus %d and %d\n", first, last);
    return 0;
}
