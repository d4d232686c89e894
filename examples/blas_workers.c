/* Worker processes that multiply matrices with a BLAS library loaded by its
 * path (Debian installs each build of OpenBLAS and BLIS in a directory of
 * its own: openblas-pthread, openblas-openmp, blis-pthread, blis-openmp).
 * The parent is the first worker, then waits for the others (a parent that
 * only waited would, on a crowded machine, wait for a CPU at its last
 * wake-up and read as a starved thread; the Python pool case is
 * pool_matmul.py).
 * Each worker repeats a dgemm of n x n matrices for `seconds` of wall time:
 * the library's own thread pool (sized by OPENBLAS_NUM_THREADS,
 * BLIS_NUM_THREADS, OMP_NUM_THREADS, or by default from the CPUs) computes
 * next to the worker's main thread. With "thread", each worker multiplies in
 * a thread it creates and joins (the application's thread, computing beside
 * the library's pool: two runtimes on the same cores).
 * Usage: blas_workers LIBRARY [processes] [seconds] [n] [thread]  (default 2, 1 s, 256) */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef void (*dgemm_fn)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                         const int*, const double*, const int*, const double*, double*, const int*);

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int work(const char* library, double seconds, int n) {
    /* Loaded in the worker, after the fork: a pool started before a fork
     * would not exist in the child. */
    void* lib = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "blas_workers: %s\n", dlerror());
        return 1;
    }
    dgemm_fn dgemm = (dgemm_fn)dlsym(lib, "dgemm_");
    if (dgemm == NULL) {
        fprintf(stderr, "blas_workers: %s has no dgemm_\n", library);
        return 1;
    }
    double* a = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double* b = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double* c = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (a == NULL || b == NULL || c == NULL) {
        free(a);
        free(b);
        free(c);
        return 1;
    }
    for (int i = 0; i < n * n; ++i) {
        a[i] = (double)(i % 7) * 0.25;
        b[i] = (double)(i % 5) * 0.5;
        c[i] = 0;
    }
    const double one = 1.0, zero = 0.0;
    const double end = now() + seconds;
    long products = 0;
    while (now() < end) {
        dgemm("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
        ++products;
    }
    printf("worker %d: %ld products of %dx%d (c[1] = %g)\n", (int)getpid(), products, n, n, c[1]);
    free(a);
    free(b);
    free(c);
    return 0;
}

struct Work {
    const char* library;
    double seconds;
    int n;
    int rc;
};

static void* work_in_a_thread(void* arg) {
    struct Work* w = arg;
    w->rc = work(w->library, w->seconds, w->n);
    return NULL;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: blas_workers LIBRARY [processes] [seconds] [n]\n");
        return 2;
    }
    const int processes = argc > 2 ? atoi(argv[2]) : 2;
    const double seconds = argc > 3 ? atof(argv[3]) : 1.0;
    const int n = argc > 4 ? atoi(argv[4]) : 256;
    const int in_a_thread = argc > 5 && strcmp(argv[5], "thread") == 0;
    int failed = 0, status = 0;
    /* The others first, then the parent's own share. */
    for (int p = processes - 1; p >= 0; --p) {
        const pid_t pid = p == 0 ? 0 : fork();
        if (pid < 0) return 1;
        if (pid != 0) continue;
        int rc;
        if (in_a_thread) {
            struct Work w = {argv[1], seconds, n, 1};
            pthread_t t;
            if (pthread_create(&t, NULL, work_in_a_thread, &w) != 0) return 1;
            pthread_join(t, NULL);
            rc = w.rc;
        } else {
            rc = work(argv[1], seconds, n);
        }
        fflush(stdout);
        if (p > 0) _exit(rc);
        failed = rc != 0;
    }
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    return failed;
}
