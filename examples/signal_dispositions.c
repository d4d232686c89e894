/* Signal dispositions the application sets and reads back, built as strict
 * C11 (-std=c11, no GNU extensions): there signal() is glibc's
 * __sysv_signal, a path around an interposed signal(). Each mode prints what
 * the application saw; run with and without the recorder, the output and the
 * exit status must be the same. Usage: signal_dispositions MODE
 *   chain SETTER      SETTER (signal, bsd_signal, sysv_signal, sigset)
 *                     installs the application's SIGTERM handler (it
 *                     _exits 7); then a "library" installs its own handler
 *                     with sigaction, keeping the previous one, and chains
 *                     to it. SIGTERM is raised: exits 7 when the chain
 *                     reaches the application's handler, dies by SIGTERM
 *                     (143 in a shell) when the library was told SIG_DFL
 *   query             sets SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGINT and
 *                     SIGALRM each one way (sigaction with SA_RESTART,
 *                     signal, bsd_signal, sysv_signal, sigset, sigignore;
 *                     SIGQUIT is never set), and prints, for each, what
 *                     sigaction(sig, NULL, &old) answers: handler, flags,
 *                     mask, whether a restorer is set; then after
 *                     siginterrupt on SIGTERM and SIGQUIT, and sigset
 *                     SIG_DFL on SIGINT; exits 0
 *   siglongjmp        leaves a SIGUSR1 handler by siglongjmp three times
 *                     (once from an alternate signal stack), starts a
 *                     thread, returns 8 from main
 *   exit-in-handler   starts a thread, then a SIGUSR1 handler calls exit(9)
 *                     (the control case: exit() from a handler) */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Declared by glibc only outside strict C (or with older X/Open levels). */
typedef void (*handler_fn)(int);
extern handler_fn bsd_signal(int, handler_fn);
extern handler_fn sysv_signal(int, handler_fn);

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* the kernel's flag; glibc sets it and hides its name */
#endif

static void application_handler(int sig) {
    (void)sig;
    static const char said[] = "application handler ran\n";
    if (write(1, said, sizeof said - 1) < 0) _exit(99);
    _exit(7);
}

/* ------------------------------------------------------------------ chain */

static struct sigaction g_previous;

/* A library's handler that passes the signal on to what was there before. */
static void library_handler(int sig) {
    static const char said[] = "library handler ran\n";
    if (write(1, said, sizeof said - 1) < 0) _exit(99);
    if (g_previous.sa_handler == SIG_IGN) return;
    if (g_previous.sa_handler == SIG_DFL) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_previous.sa_handler(sig);
}

static int set_with(const char* setter, int sig, handler_fn h) {
    handler_fn old = SIG_ERR;
    if (strcmp(setter, "signal") == 0) old = signal(sig, h); /* __sysv_signal in strict C */
    else if (strcmp(setter, "bsd_signal") == 0) old = bsd_signal(sig, h);
    else if (strcmp(setter, "sysv_signal") == 0) old = sysv_signal(sig, h);
    else if (strcmp(setter, "sigset") == 0) old = sigset(sig, h);
    else return -1;
    return old == SIG_ERR ? -1 : 0;
}

static int mode_chain(const char* setter) {
    if (set_with(setter, SIGTERM, application_handler) != 0) {
        fprintf(stderr, "chain: %s failed or is unknown\n", setter);
        return 2;
    }
    struct sigaction lib;
    memset(&lib, 0, sizeof lib);
    lib.sa_handler = library_handler;
    sigemptyset(&lib.sa_mask);
    if (sigaction(SIGTERM, &lib, &g_previous) != 0) return 3;
    printf("chain: the library was told the previous handler is %s\n",
           g_previous.sa_handler == application_handler ? "the application's"
           : g_previous.sa_handler == SIG_DFL           ? "SIG_DFL"
                                                        : "something else");
    fflush(stdout);
    raise(SIGTERM);
    return 4;
}

/* ------------------------------------------------------------------ query */

static void other_handler(int sig) { (void)sig; }

static void print_disposition(const char* how, int sig) {
    struct sigaction now;
    memset(&now, 0, sizeof now);
    if (sigaction(sig, NULL, &now) != 0) {
        printf("%-11s sig %2d: sigaction failed\n", how, sig);
        return;
    }
    const char* handler = now.sa_handler == SIG_DFL             ? "SIG_DFL"
                          : now.sa_handler == SIG_IGN           ? "SIG_IGN"
                          : now.sa_handler == other_handler     ? "other_handler"
                          : now.sa_handler == application_handler ? "application_handler"
                                                                : "unknown";
    /* The mask as far as the signals numbered 1..31. */
    unsigned long mask = 0;
    for (int s = 1; s < 32; ++s)
        if (sigismember(&now.sa_mask, s) == 1) mask |= 1ul << s;
    printf("%-11s sig %2d: handler %s flags %#x restorer %s mask %#lx\n", how, sig, handler,
           (unsigned)now.sa_flags, (now.sa_flags & SA_RESTORER) ? "set" : "none", mask);
}

static int mode_query(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = other_handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, SIGUSR2);
    act.sa_flags = SA_RESTART;
    if (sigaction(SIGTERM, &act, NULL) != 0) return 2;
    if (signal(SIGUSR1, other_handler) == SIG_ERR) return 3;
    if (bsd_signal(SIGUSR2, other_handler) == SIG_ERR) return 4;
    if (sysv_signal(SIGHUP, other_handler) == SIG_ERR) return 5;
    if (sigset(SIGINT, other_handler) == SIG_ERR) return 6;
    if (sigignore(SIGALRM) != 0) return 7;
    print_disposition("sigaction", SIGTERM);
    print_disposition("signal", SIGUSR1);
    print_disposition("bsd_signal", SIGUSR2);
    print_disposition("sysv_signal", SIGHUP);
    print_disposition("sigset", SIGINT);
    print_disposition("sigignore", SIGALRM);
    print_disposition("never set", SIGQUIT);
    /* siginterrupt turns SA_RESTART off on the handler that is there. */
    if (siginterrupt(SIGTERM, 1) != 0) return 8;
    print_disposition("siginterrupt", SIGTERM);
    /* ... and sets SA_RESTART on a default disposition. */
    if (siginterrupt(SIGQUIT, 0) != 0) return 10;
    print_disposition("siginterrupt", SIGQUIT);
    /* A handler set back to the default. */
    if (sigset(SIGINT, SIG_DFL) == SIG_ERR) return 9;
    print_disposition("sigset DFL", SIGINT);
    return 0;
}

/* ------------------------------------------------------------- siglongjmp */

static sigjmp_buf g_jump;
static volatile sig_atomic_t g_jumps = 0;

static void jump_out(int sig) {
    (void)sig;
    ++g_jumps;
    siglongjmp(g_jump, 1);
}

static void* idle(void* arg) { return arg; }

static int mode_siglongjmp(void) {
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = jump_out;
    sigemptyset(&act.sa_mask);
    if (sigaction(SIGUSR1, &act, NULL) != 0) return 2;
    for (volatile int round = 0; round < 3; ++round) {
        if (round == 2) {  /* the last one on an alternate signal stack */
            static char alt[64 * 1024];
            stack_t ss;
            memset(&ss, 0, sizeof ss);
            ss.ss_sp = alt;
            ss.ss_size = sizeof alt;
            if (sigaltstack(&ss, NULL) != 0) return 3;
            act.sa_flags = SA_ONSTACK;
            if (sigaction(SIGUSR1, &act, NULL) != 0) return 4;
        }
        if (sigsetjmp(g_jump, 1) == 0) {
            raise(SIGUSR1);
            return 5;  /* not reached: the handler jumps back */
        }
    }
    pthread_t t;
    if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0) return 6;
    printf("siglongjmp: left the handler %d times\n", (int)g_jumps);
    return 8;
}

static void exit_from_handler(int sig) {
    (void)sig;
    exit(9);
}

static int mode_exit_in_handler(void) {
    pthread_t t;  /* a process with threads gets a model, or a reason why not */
    if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0) return 4;
    struct sigaction act;
    memset(&act, 0, sizeof act);
    act.sa_handler = exit_from_handler;
    sigemptyset(&act.sa_mask);
    if (sigaction(SIGUSR1, &act, NULL) != 0) return 2;
    raise(SIGUSR1);
    return 3;
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "chain") == 0 && argc > 2) return mode_chain(argv[2]);
    if (strcmp(mode, "query") == 0) return mode_query();
    if (strcmp(mode, "siglongjmp") == 0) return mode_siglongjmp();
    if (strcmp(mode, "exit-in-handler") == 0) return mode_exit_in_handler();
    fprintf(stderr, "usage: %s chain SETTER | query | siglongjmp | exit-in-handler\n", argv[0]);
    return 64;
}
