/* Runs whose recording ends early or misses work, each run for real under the
 * recorder by tests/system/test_live_odd_recordings.cpp. Usage: odd_recordings MODE
 *   threads N             starts N threads one after another (each joined,
 *                         each computing about 1 ms); exits 0
 *   killed-mid-threads N  the same, but sends itself SIGKILL after N/2 of them
 *   glibc-threads         a SIGEV_THREAD timer fires 20 times and an
 *                         aio_write notifies a SIGEV_THREAD function: glibc
 *                         creates those threads itself; each notification
 *                         computes for about 30 ms; exits 0
 *   raw-clone-affinity    a thread made with clone(CLONE_VM|CLONE_THREAD)
 *                         binds itself (sched_setaffinity(0)) to the last
 *                         CPU it may use; the main thread is never bound;
 *                         exits 0
 *   sequential N          forks N children one after another, each computing
 *                         for about 1 ms and exiting 0 before the next
 *                         starts; exits 0 */
#define _GNU_SOURCE
#include <aio.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Computes (never sleeps) for about ms milliseconds of this thread's CPU. */
static void compute_ms(int ms) {
    struct timespec start, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile unsigned long x = 0;
    for (;;) {
        for (int i = 0; i < 10000; ++i) x += (unsigned long)i * 7u;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        long long used = (t.tv_sec - start.tv_sec) * 1000000000LL + (t.tv_nsec - start.tv_nsec);
        if (used >= (long long)ms * 1000000LL) break;
    }
}

static void* short_work(void* arg) {
    (void)arg;
    compute_ms(1);
    return NULL;
}

static int threads(int n, int kill_at) {
    for (int i = 0; i < n; ++i) {
        if (i == kill_at) kill(getpid(), SIGKILL);
        pthread_t t;
        if (pthread_create(&t, NULL, short_work, NULL) != 0) return 2;
        pthread_join(t, NULL);
    }
    return 0;
}

static atomic_int g_notified;

static void on_timer(union sigval v) {
    (void)v;
    compute_ms(30);
    atomic_fetch_add(&g_notified, 1);
}

static int glibc_threads(void) {
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD;
    sev.sigev_notify_function = on_timer;
    timer_t timer;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) return perror("timer_create"), 2;
    struct itimerspec every = {{0, 40 * 1000 * 1000}, {0, 40 * 1000 * 1000}};
    if (timer_settime(timer, 0, &every, NULL) != 0) return perror("timer_settime"), 2;
    const long long deadline = now_ns() + 10LL * 1000000000LL;
    while (atomic_load(&g_notified) < 20 && now_ns() < deadline) usleep(5000);
    timer_delete(timer);

    /* An asynchronous write whose completion runs on_timer on a thread of glibc's. */
    char path[] = "/tmp/odd_recordings_aio_XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) return perror("mkstemp"), 2;
    unlink(path);
    static char data[4096];
    struct aiocb cb;
    memset(&cb, 0, sizeof cb);
    cb.aio_fildes = fd;
    cb.aio_buf = data;
    cb.aio_nbytes = sizeof data;
    cb.aio_sigevent.sigev_notify = SIGEV_THREAD;
    cb.aio_sigevent.sigev_notify_function = on_timer;
    if (aio_write(&cb) != 0) return perror("aio_write"), 2;
    while (atomic_load(&g_notified) < 21 && now_ns() < deadline) usleep(5000);
    close(fd);
    printf("glibc-threads: %d notifications\n", atomic_load(&g_notified));
    return atomic_load(&g_notified) >= 21 ? 0 : 3;
}

static atomic_int g_clone_done;
static atomic_int g_bound_cpu = -1;

static int raw_thread(void* arg) {
    (void)arg;
    cpu_set_t mine;
    CPU_ZERO(&mine);
    sched_getaffinity(0, sizeof mine, &mine);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mine)) last = c;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(last, &one);
    if (sched_setaffinity(0, sizeof one, &one) == 0) atomic_store(&g_bound_cpu, last);
    compute_ms(20);
    atomic_store(&g_clone_done, 1);
    syscall(SYS_exit, 0); /* this thread only: it has no pthread to unwind */
    return 0;
}

static int raw_clone_affinity(void) {
    const size_t stack_size = 256 * 1024;
    char* stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) return perror("mmap"), 2;
    const int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
    if (clone(raw_thread, stack + stack_size, flags, NULL) < 0) return perror("clone"), 2;
    const long long deadline = now_ns() + 10LL * 1000000000LL;
    while (!atomic_load(&g_clone_done) && now_ns() < deadline) usleep(1000);
    usleep(10000); /* its exit is complete before the stack could be reused */
    cpu_set_t main_mask;
    sched_getaffinity(0, sizeof main_mask, &main_mask);
    printf("raw-clone-affinity: clone bound to cpu %d; main thread on %d cpus\n", atomic_load(&g_bound_cpu),
           CPU_COUNT(&main_mask));
    return atomic_load(&g_clone_done) ? 0 : 3;
}

static int sequential(int n) {
    for (int i = 0; i < n; ++i) {
        const pid_t child = fork();
        if (child < 0) return perror("fork"), 2;
        if (child == 0) {
            compute_ms(1);
            _exit(0);
        }
        int status = 0;
        if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 3;
    }
    printf("sequential: %d children\n", n);
    return 0;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    const int n = argc > 2 ? atoi(argv[2]) : 0;
    if (strcmp(mode, "threads") == 0) return threads(n > 0 ? n : 1000, -1);
    if (strcmp(mode, "killed-mid-threads") == 0) return threads(n > 0 ? n : 1000, (n > 0 ? n : 1000) / 2);
    if (strcmp(mode, "glibc-threads") == 0) return glibc_threads();
    if (strcmp(mode, "raw-clone-affinity") == 0) return raw_clone_affinity();
    if (strcmp(mode, "sequential") == 0) return sequential(n > 0 ? n : 100);
    fprintf(stderr, "usage: odd_recordings threads N | killed-mid-threads N | glibc-threads | raw-clone-affinity | sequential N\n");
    return 64;
}
