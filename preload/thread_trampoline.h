/* The start routine our pthread_create hands to glibc in place of the
 * application's. Written in C because pthread_cleanup_push in C needs
 * nothing from libstdc++ (the C++ form relies on exception support, which
 * this library does not link): the cleanup handler records the end of a
 * thread that leaves through pthread_exit or cancellation. */
#ifndef STACKSAGE_PRELOAD_THREAD_TRAMPOLINE_H
#define STACKSAGE_PRELOAD_THREAD_TRAMPOLINE_H

#ifdef __cplusplus
extern "C" {
#endif

enum stacksage_thread_end_how {
    STACKSAGE_END_RETURN = 0,  /* the start routine returned */
    STACKSAGE_END_UNWIND = 1,  /* pthread_exit or cancellation unwound it */
};

void* stacksage_thread_trampoline(void* launch);

/* Implemented in thread_events.cpp. */
void stacksage_thread_begin(void* launch, void* (**start)(void*), void** arg);
void stacksage_thread_end(int how);

#ifdef __cplusplus
}
#endif

#endif
