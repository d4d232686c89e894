/* Linked against early_thread_lib, whose constructor creates a thread. */
#include <stdio.h>

int early_thread_lib_loaded(void);

int main(void) {
    printf("early_thread: library loaded: %d\n", early_thread_lib_loaded());
    return 0;
}
