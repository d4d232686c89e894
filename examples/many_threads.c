/* Short-lived threads: 1,000 by default, ten alive at a time.
 * Usage: many_threads [count] [close-fds|self-detach]
 *   close-fds: first close every descriptor above stderr, as a daemon does
 *   (the recorder's included)
 *   self-detach: each thread detaches itself first thing and is never
 *   joined (its descriptor may be reused while its creator still runs) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t finished = PTHREAD_COND_INITIALIZER;
static int running = 0;

static void* detached_work(void* arg) {
    pthread_detach(pthread_self());
    (void)arg;
    pthread_mutex_lock(&lock);
    --running;
    pthread_cond_signal(&finished);
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Ten at a time, each gone on its own. */
static int run_self_detaching(int count) {
    for (int done = 0; done < count; ++done) {
        pthread_mutex_lock(&lock);
        while (running >= 10) pthread_cond_wait(&finished, &lock);
        ++running;
        pthread_mutex_unlock(&lock);
        pthread_t t;
        if (pthread_create(&t, NULL, detached_work, NULL) != 0) return 1;
    }
    pthread_mutex_lock(&lock);
    while (running > 0) pthread_cond_wait(&finished, &lock);
    pthread_mutex_unlock(&lock);
    return 0;
}

static void* work(void* arg) {
    volatile long x = (long)arg;
    for (int i = 0; i < 1000; ++i) x = x + i;
    return NULL;
}

int main(int argc, char** argv) {
    int count = argc > 1 ? atoi(argv[1]) : 1000;
    if (argc > 2 && strcmp(argv[2], "close-fds") == 0) {
        long max = sysconf(_SC_OPEN_MAX);
        for (long fd = 3; fd < (max > 0 ? max : 65536); ++fd) close((int)fd);
    }
    if (argc > 2 && strcmp(argv[2], "self-detach") == 0) {
        if (run_self_detaching(count) != 0) return 1;
        printf("many_threads: %d threads\n", count);
        return 0;
    }
    pthread_t batch[10];
    int done = 0;
    while (done < count) {
        int n = count - done < 10 ? count - done : 10;
        for (int i = 0; i < n; ++i) pthread_create(&batch[i], NULL, work, (void*)(long)i);
        for (int i = 0; i < n; ++i) pthread_join(batch[i], NULL);
        done += n;
    }
    printf("many_threads: %d threads\n", done);
    return 0;
}
