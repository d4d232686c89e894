/* Dies mid-run after starting threads. Usage: crash segv | segv-handled | kill
 *   segv          writes through a null pointer (default action: core)
 *   segv-handled  the same with its own SIGSEGV handler, which exits with 42
 *   kill          sends itself SIGKILL while a thread is running
 *   kill-busy     sends itself SIGKILL while four threads keep creating and
 *                 joining short-lived threads (lines being written at that
 *                 very moment) */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void* sleeper(void* unused) {
    (void)unused;
    for (;;) pause();
    return NULL;
}

static void* nothing(void* unused) { return unused; }

static void* churn(void* unused) {
    (void)unused;
    for (;;) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) == 0) pthread_join(t, NULL);
    }
    return NULL;
}

static void on_segv(int sig) {
    (void)sig;
    static const char msg[] = "crash: handled SIGSEGV\n";
    write(2, msg, sizeof msg - 1);
    _exit(42);
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "segv";
    pthread_t t;
    if (strcmp(mode, "kill-busy") == 0) {
        for (int i = 0; i < 4; ++i) pthread_create(&t, NULL, churn, NULL);
        usleep(300000);
        kill(getpid(), SIGKILL);
    }
    pthread_create(&t, NULL, sleeper, NULL);
    usleep(10000); /* let the thread start (and be recorded) */
    if (strcmp(mode, "kill") == 0) {
        kill(getpid(), SIGKILL);
    } else {
        if (strcmp(mode, "segv-handled") == 0) {
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_segv;
            sigaction(SIGSEGV, &sa, NULL);
        }
        volatile int* null = NULL;
        *null = 1;
    }
    return 0;
}
