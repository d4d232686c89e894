/* Threads that do not simply return: one leaves through pthread_exit from a
 * nested call, one is cancelled, and finally the main thread itself calls
 * pthread_exit while a detached thread finishes the process. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void leave_early(void) { pthread_exit((void*)42); }

static void* exits(void* unused) {
    (void)unused;
    leave_early();
    return NULL;
}

static void* waits_forever(void* unused) {
    (void)unused;
    for (;;) pause(); /* a cancellation point */
    return NULL;
}

static void* last_one(void* unused) {
    (void)unused;
    usleep(20000);
    printf("thread_exit: last thread done\n");
    fflush(stdout);
    return NULL;
}

int main(void) {
    pthread_t a, b, c;
    void* result = NULL;
    pthread_create(&a, NULL, exits, NULL);
    pthread_join(a, &result);
    pthread_create(&b, NULL, waits_forever, NULL);
    usleep(10000);
    pthread_cancel(b);
    pthread_join(b, NULL);
    pthread_create(&c, NULL, last_one, NULL);
    pthread_detach(c);
    pthread_exit(NULL);
}
