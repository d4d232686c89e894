/* Processes and images the recorder's interposers do not see being made: the
 * application must behave exactly as without the recorder, and each process
 * must be recorded in a log of its own (or said to be untraced).
 * Usage: unfollowed_processes MODE [ARG]
 *   daemon FILE     starts 2 threads, then daemon(1, 1): the parent exits 0
 *                   inside glibc; the daemon starts 8 threads, writes its pid
 *                   into FILE (through FILE.tmp and rename) and exits 3
 *   _Fork           starts 2 threads; _Fork(); the child starts 3 threads
 *                   and exits 4; the parent waits, starts 2 more threads and
 *                   exits 0 when the child exited 4 (else 1)
 *   syscall-fork    the same with syscall(SYS_fork)
 *   clone           the same with clone(fn, stack, SIGCHLD, ...)
 *   fexecve         starts a thread, then fexecve()s itself as "child"
 *   execveat        the same with execveat(dirfd, "name", ...)
 *   syscall-execve  the same with syscall(SYS_execve, ...)
 *   clearenv        starts a thread, clearenv(), execs itself as "child"
 *   own-preload     starts a thread, sets LD_PRELOAD to "" itself, execs
 *                   itself as "child"
 *   exit-while-creating
 *                   two threads create threads without end (one every
 *                   0.2 ms each, living up to 3 ms); main calls exit(2)
 *                   after 50 ms
 *   chdir DIR       starts 2 threads, chdir(DIR), then fork+exec of itself as
 *                   "child"; exits 0 when the child exited 5
 *   child           starts 2 threads, exits 5 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static void* work(void* arg) {
    volatile long x = (long)arg;
    for (int i = 0; i < 1000; ++i) x = x + i;
    return NULL;
}

static int run_threads(int n) {
    for (int i = 0; i < n; ++i) {
        pthread_t t;
        if (pthread_create(&t, NULL, work, (void*)(long)i) != 0) return -1;
        pthread_join(t, NULL);
    }
    return n;
}

static int child_body(void) { return run_threads(3) == 3 ? 4 : 1; }

static int clone_child(void* unused) {
    (void)unused;
    exit(child_body());
}

/* The child of a fork the interposers cannot see exits 4. */
static int mode_unseen_fork(const char* how) {
    if (run_threads(2) != 2) return 1;
    pid_t pid = -1;
    if (strcmp(how, "_Fork") == 0) {
        pid = _Fork();
    } else if (strcmp(how, "syscall-fork") == 0) {
#ifdef SYS_fork
        pid = (pid_t)syscall(SYS_fork);
#else
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
    } else {
        static char stack[256 * 1024] __attribute__((aligned(16)));
        pid = clone(clone_child, stack + sizeof stack, SIGCHLD, NULL);
    }
    if (pid < 0) return 1;
    if (pid == 0) exit(child_body());
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return 1;
    if (run_threads(2) != 2) return 1;
    printf("%s: child exited %d\n", how, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) && WEXITSTATUS(status) == 4 ? 0 : 1;
}

static int mode_daemon(const char* file) {
    if (run_threads(2) != 2) return 1;
    if (daemon(1, 1) != 0) return 1;
    if (run_threads(8) != 8) return 1;
    char temp[4096];
    snprintf(temp, sizeof temp, "%s.tmp", file);
    FILE* f = fopen(temp, "w");
    if (f == NULL) return 1;
    fprintf(f, "%d\n", (int)getpid());
    fclose(f);
    rename(temp, file);
    return 3;
}

static int mode_exec(const char* how, const char* self) {
    if (run_threads(1) != 1) return 1;
    char* argv[] = {(char*)self, (char*)"child", NULL};
    if (strcmp(how, "fexecve") == 0) {
        int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
        if (fd < 0) return 1;
        fexecve(fd, argv, environ);
    } else if (strcmp(how, "execveat") == 0) {
        int dir = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0) return 1;
        execveat(dir, "exe", argv, environ, 0);
    } else if (strcmp(how, "syscall-execve") == 0) {
        syscall(SYS_execve, "/proc/self/exe", argv, environ);
    } else if (strcmp(how, "clearenv") == 0) {
        clearenv();
        execv("/proc/self/exe", argv);
    } else {
        setenv("LD_PRELOAD", "", 1);
        execv("/proc/self/exe", argv);
    }
    perror("exec");
    return 1;
}

static void* sleep_a_little(void* unused) {
    (void)unused;
    struct timespec pause = {0, 3 * 1000 * 1000};
    nanosleep(&pause, NULL);
    return NULL;
}

/* A new thread every 0.2 ms, each living 3 ms: some are always starting. */
static void* create_forever(void* unused) {
    (void)unused;
    enum { kRing = 32 };
    pthread_t ring[kRing];
    int live[kRing] = {0};
    for (unsigned i = 0;; i = (i + 1) % kRing) {
        if (live[i]) pthread_join(ring[i], NULL);
        live[i] = pthread_create(&ring[i], NULL, i % 2 ? sleep_a_little : work, NULL) == 0;
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static int mode_exit_while_creating(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; ++i)
        if (pthread_create(&t[i], NULL, create_forever, NULL) != 0) return 1;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    exit(2);
}

static int mode_chdir(const char* dir) {
    if (run_threads(2) != 2) return 1;
    if (chdir(dir) != 0) return 1;
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        execl("/proc/self/exe", "unfollowed_processes", "child", (char*)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 5 ? 0 : 1;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "child") == 0) return run_threads(2) == 2 ? 5 : 1;
    if (strcmp(mode, "daemon") == 0 && argc > 2) return mode_daemon(argv[2]);
    if (strcmp(mode, "_Fork") == 0 || strcmp(mode, "syscall-fork") == 0 || strcmp(mode, "clone") == 0)
        return mode_unseen_fork(mode);
    if (strcmp(mode, "fexecve") == 0 || strcmp(mode, "execveat") == 0 || strcmp(mode, "syscall-execve") == 0 ||
        strcmp(mode, "clearenv") == 0 || strcmp(mode, "own-preload") == 0)
        return mode_exec(mode, argv[0]);
    if (strcmp(mode, "exit-while-creating") == 0) return mode_exit_while_creating();
    if (strcmp(mode, "chdir") == 0 && argc > 2) return mode_chdir(argv[2]);
    fprintf(stderr, "usage: %s daemon FILE | _Fork | syscall-fork | clone | fexecve | execveat | "
                    "syscall-execve | clearenv | own-preload | exit-while-creating | chdir DIR | child\n",
            argv[0]);
    return 2;
}
