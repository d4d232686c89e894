/* Hostile conditions for the recorder: the application must behave exactly as
 * without it. Usage: fault_cases MODE
 *   emfile            lowers RLIMIT_NOFILE to 32, opens /dev/null until EMFILE,
 *                     then starts 16 threads (all alive at once), forks a child
 *                     that starts 2 threads and exits 4; exits 3
 *   low-limit         lowers RLIMIT_NOFILE to 32 and execs itself as "open-all":
 *                     opens /dev/null until EMFILE, starts 4 threads; exits 3
 *   wait-rm           starts 50 threads, prints "wait-rm: ready", waits (10 s
 *                     at most) until the directory $STACKSAGE_OUTPUT (or
 *                     $FAULT_DIR) is gone, then starts 2000 more threads (the
 *                     log must grow), forks a child as in emfile; exits 5
 *   threads N         starts N threads, ten at a time; exits 6
 *   abort             abort() while a thread runs (no handler)
 *   abort-handled     the same with a SIGABRT handler that returns (abort
 *                     then ends the process by SIGABRT anyway)
 *   term              sends itself SIGTERM while a thread runs (no handler)
 *   term-handled      a SIGTERM handler sets a flag; main returns 9
 *   exit-in-handler   four threads keep creating threads; a SIGTERM handler
 *                     calls exit(6) (an atexit handler still prints)
 *   _exit-in-handler  the same with SIGUSR1 and _exit(7)
 *   spawn             vfork+exec and posix_spawn of itself ("child": two
 *                     threads, exit 5); prints each child's pid and status
 *   child             two threads, exits 5
 *   dlopen-gomp       dlopen("libgomp.so.1") after start and runs a parallel
 *                     region of 4 threads through dlsym'd GOMP_parallel
 *   exec-chain N [ARG...]
 *                     starts a thread, then execs itself as "exec-chain N-1
 *                     ARG..." (the same pid, a new image each time) until N
 *                     is 0, which prints "exec-chain: done" and exits 0 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static void* work(void* arg) {
    volatile long x = (long)arg;
    for (int i = 0; i < 1000; ++i) x = x + i;
    return NULL;
}

/* n threads, ten alive at a time */
static int run_threads(int n) {
    pthread_t batch[10];
    int done = 0;
    while (done < n) {
        int k = n - done < 10 ? n - done : 10;
        for (int i = 0; i < k; ++i)
            if (pthread_create(&batch[i], NULL, work, (void*)(long)i) != 0) return -1;
        for (int i = 0; i < k; ++i) pthread_join(batch[i], NULL);
        done += k;
    }
    return done;
}

static pthread_barrier_t g_barrier;

static void* wait_all(void* unused) {
    (void)unused;
    pthread_barrier_wait(&g_barrier);
    return NULL;
}

/* n threads alive at once (they meet at a barrier with main) */
static int run_together(int n) {
    pthread_t t[64];
    if (n > 64) n = 64;
    pthread_barrier_init(&g_barrier, NULL, (unsigned)n + 1);
    for (int i = 0; i < n; ++i)
        if (pthread_create(&t[i], NULL, wait_all, NULL) != 0) return -1;
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < n; ++i) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_barrier);
    return n;
}

/* forks a child that starts 2 threads and exits 4; returns its exit status */
static int fork_child(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) exit(run_together(2) == 2 ? 4 : 1);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int mode_emfile(void) {
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = 32;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 2;
    int opened = 0;
    while (open("/dev/null", O_RDONLY) >= 0) ++opened;
    const int error = errno;
    printf("emfile: opened %d until %s\n", opened, error == EMFILE ? "EMFILE" : strerror(error));
    printf("emfile: %d threads\n", run_together(16));
    printf("emfile: child exited %d\n", fork_child());
    /* dlopen needs a descriptor too: the application sees the same failure */
    printf("emfile: dlopen %s\n", dlopen("libgomp.so.1", RTLD_NOW) ? "ok" : "failed");
    return 3;
}

/* The limit is lowered before exec: the new image starts with it. */
static int mode_low_limit(const char* self) {
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = 32;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 2;
    char* args[] = {(char*)self, (char*)"open-all", NULL};
    execv("/proc/self/exe", args);
    return 2;
}

static int mode_open_all(void) {
    int opened = 0;
    while (open("/dev/null", O_RDONLY) >= 0) ++opened;
    printf("open-all: opened %d until %s\n", opened, errno == EMFILE ? "EMFILE" : strerror(errno));
    printf("open-all: %d threads\n", run_together(4));
    return 3;
}

static int mode_wait_rm(void) {
    const char* dir = getenv("FAULT_DIR");
    if (dir == NULL) dir = getenv("STACKSAGE_OUTPUT");
    if (dir == NULL) return 2;
    printf("wait-rm: %d threads\n", run_threads(50));
    printf("wait-rm: ready\n");
    fflush(stdout);
    struct stat st;
    int waited = 0;
    while (stat(dir, &st) == 0 && waited < 10000) {
        usleep(1000);
        ++waited;
    }
    printf("wait-rm: directory %s\n", stat(dir, &st) == 0 ? "still there" : "gone");
    printf("wait-rm: %d more threads\n", run_threads(2000));
    printf("wait-rm: child exited %d\n", fork_child());
    return 5;
}

static void* sleeper(void* unused) {
    (void)unused;
    for (;;) pause();
    return NULL;
}

static pthread_t start_sleeper(void) {
    pthread_t t;
    pthread_create(&t, NULL, sleeper, NULL);
    usleep(10000); /* let it start (and be recorded) */
    return t;
}

static void say(const char* text) { write(1, text, strlen(text)); }

static void on_abort(int sig) {
    (void)sig;
    say("fault_cases: handled SIGABRT\n");
}

static volatile sig_atomic_t g_terminated = 0;
static void on_term_flag(int sig) {
    (void)sig;
    g_terminated = 1;
}

static void on_term_exit(int sig) {
    (void)sig;
    say("fault_cases: exit from the handler\n");
    exit(6);
}

static void on_usr1_exit(int sig) {
    (void)sig;
    say("fault_cases: _exit from the handler\n");
    _exit(7);
}

static void at_exit_print(void) { say("fault_cases: atexit handler ran\n"); }

static void* nothing(void* unused) { return unused; }

static void* churn(void* unused) {
    (void)unused;
    for (;;) {
        pthread_t t;
        if (pthread_create(&t, NULL, nothing, NULL) == 0) pthread_join(t, NULL);
    }
    return NULL;
}

static void install(int sig, void (*handler)(int)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

static int mode_signal(const char* mode) {
    if (strcmp(mode, "abort") == 0 || strcmp(mode, "abort-handled") == 0) {
        if (strcmp(mode, "abort-handled") == 0) install(SIGABRT, on_abort);
        start_sleeper();
        abort();
    }
    if (strcmp(mode, "term") == 0) {
        start_sleeper();
        kill(getpid(), SIGTERM);
        for (;;) pause();
    }
    if (strcmp(mode, "term-handled") == 0) {
        install(SIGTERM, on_term_flag);
        start_sleeper();
        kill(getpid(), SIGTERM);
        while (!g_terminated) usleep(1000);
        say("fault_cases: SIGTERM handled, returning 9\n");
        return 9;
    }
    const int is_exit = strcmp(mode, "exit-in-handler") == 0;
    atexit(at_exit_print);
    install(is_exit ? SIGTERM : SIGUSR1, is_exit ? on_term_exit : on_usr1_exit);
    pthread_t t;
    for (int i = 0; i < 4; ++i) pthread_create(&t, NULL, churn, NULL);
    /* main takes no part: the signal lands on a thread busy creating threads */
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, is_exit ? SIGTERM : SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &only, NULL);
    usleep(200000);
    kill(getpid(), is_exit ? SIGTERM : SIGUSR1);
    for (;;) pause();
}

static int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int mode_spawn(const char* self) {
    char* child_argv[] = {(char*)self, (char*)"child", NULL};
    int ok = 1;
    fflush(stdout);
    pid_t v = vfork();
    if (v < 0) return 2;
    if (v == 0) {
        execv("/proc/self/exe", child_argv);
        _exit(127);
    }
    int status = wait_for(v);
    printf("spawn: vfork child %d exited %d\n", (int)v, status);
    ok = ok && status == 5;
    pid_t s = 0;
    int rc = posix_spawn(&s, "/proc/self/exe", NULL, NULL, child_argv, environ);
    if (rc != 0) return 2;
    status = wait_for(s);
    printf("spawn: posix_spawn child %d exited %d\n", (int)s, status);
    ok = ok && status == 5;
    return ok ? 0 : 1;
}

typedef void (*GompParallel)(void (*)(void*), void*, unsigned, unsigned);
typedef int (*OmpInt)(void);
static OmpInt g_thread_num, g_num_threads;
static int g_team_size[64];

static void region(void* data) {
    (void)data;
    int me = g_thread_num();
    if (me >= 0 && me < 64) g_team_size[me] = g_num_threads();
}

static int mode_dlopen_gomp(void) {
    usleep(10000); /* well after start */
    void* gomp = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL);
    if (gomp == NULL) {
        fprintf(stderr, "fault_cases: %s\n", dlerror());
        return 2;
    }
    GompParallel parallel = (GompParallel)dlsym(gomp, "GOMP_parallel");
    g_thread_num = (OmpInt)dlsym(gomp, "omp_get_thread_num");
    g_num_threads = (OmpInt)dlsym(gomp, "omp_get_num_threads");
    if (parallel == NULL || g_thread_num == NULL || g_num_threads == NULL) return 2;
    parallel(region, NULL, 4, 0);
    parallel(region, NULL, 4, 0); /* the team is reused: no new threads */
    int members = 0;
    for (int i = 0; i < 64; ++i) members += g_team_size[i] == 4;
    printf("dlopen-gomp: %d team members saw 4 threads\n", members);
    return members == 4 ? 0 : 1;
}

static int mode_exec_chain(int argc, char** argv) {
    const int left = argc > 2 ? atoi(argv[2]) : 0;
    if (run_threads(1) != 1) return 1;
    if (left <= 0) {
        printf("exec-chain: done\n");
        return 0;
    }
    char count[16];
    snprintf(count, sizeof count, "%d", left - 1);
    argv[2] = count;
    execv(argv[0], argv);
    fprintf(stderr, "fault_cases: exec %s: %s\n", argv[0], strerror(errno));
    return 1;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "emfile") == 0) return mode_emfile();
    if (strcmp(mode, "low-limit") == 0) return mode_low_limit(argv[0]);
    if (strcmp(mode, "open-all") == 0) return mode_open_all();
    if (strcmp(mode, "wait-rm") == 0) return mode_wait_rm();
    if (strcmp(mode, "threads") == 0) {
        printf("threads: %d threads\n", run_threads(argc > 2 ? atoi(argv[2]) : 100));
        return 6;
    }
    if (strcmp(mode, "spawn") == 0) return mode_spawn(argv[0]);
    if (strcmp(mode, "child") == 0) return run_together(2) == 2 ? 5 : 1;
    if (strcmp(mode, "dlopen-gomp") == 0) return mode_dlopen_gomp();
    if (strcmp(mode, "exec-chain") == 0 && argc > 2) return mode_exec_chain(argc, argv);
    if (strncmp(mode, "abort", 5) == 0 || strncmp(mode, "term", 4) == 0 ||
        strstr(mode, "exit-in-handler") != NULL)
        return mode_signal(mode);
    fprintf(stderr, "usage: fault_cases MODE (see the source)\n");
    return 2;
}
