/* Short-lived threads: 1,000 by default, ten alive at a time.
 * Usage: many_threads [count] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void* work(void* arg) {
    volatile long x = (long)arg;
    for (int i = 0; i < 1000; ++i) x = x + i;
    return NULL;
}

int main(int argc, char** argv) {
    int count = argc > 1 ? atoi(argv[1]) : 1000;
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
