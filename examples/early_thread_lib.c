/* A library that starts (and joins) a thread in its constructor, which the
 * dynamic loader may run before the recorder's own constructor. */
#include <pthread.h>

static void* work(void* unused) {
    (void)unused;
    return NULL;
}

__attribute__((constructor)) static void start_early_thread(void) {
    pthread_t t;
    if (pthread_create(&t, NULL, work, NULL) == 0) pthread_join(t, NULL);
}

int early_thread_lib_loaded(void) { return 1; }
