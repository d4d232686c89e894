#include "preload/thread_trampoline.h"

#include <pthread.h>
#include <stddef.h>

static void on_unwind(void* unused) {
    (void)unused;
    stacksage_thread_end(STACKSAGE_END_UNWIND);
}

void* stacksage_thread_trampoline(void* launch) {
    void* (*start)(void*) = NULL;
    void* arg = NULL;
    void* result = NULL;
    stacksage_thread_begin(launch, &start, &arg);
    pthread_cleanup_push(on_unwind, NULL);
    result = start(arg);
    pthread_cleanup_pop(0);
    stacksage_thread_end(STACKSAGE_END_RETURN);
    return result;
}
