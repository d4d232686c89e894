/* Short-lived threads: 1,000 by default, ten alive at a time.
 * Usage: many_threads [count] [close-fds]
 *   close-fds: first close every descriptor above stderr, as a daemon does
 *   (the recorder's included) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
