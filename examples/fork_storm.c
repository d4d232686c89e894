/* A fork storm: N processes of T threads each, started at once, as a
 * launcher starts the ranks of a node. Usage: fork_storm [N] [T]
 * (defaults 256 and 16).
 *
 * The parent forks N children, which wait at a pipe until all exist and then
 * all exec this program again as "worker" with OMPI_COMM_WORLD_RANK set (when
 * STORM_PRELOAD is set, the children put it in LD_PRELOAD first: the parent
 * stays untraced, like mpirun in `mpirun stacksage run -- ./app`). Each worker
 * starts T threads that are all alive at once and exits with rank % 8. The
 * parent prints how many workers exited as expected and exits 0 when all did. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_barrier_t g_barrier;

static void* worker_thread(void* arg) {
    volatile long x = (long)arg;
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < 10000; ++i) x = x + i;
    return NULL;
}

static int worker(int threads) {
    const char* r = getenv("OMPI_COMM_WORLD_RANK");
    const int rank = r ? atoi(r) : 0;
    pthread_t t[256];
    if (threads > 256) threads = 256;
    pthread_barrier_init(&g_barrier, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; ++i)
        if (pthread_create(&t[i], NULL, worker_thread, (void*)(long)i) != 0) return 100;
    pthread_barrier_wait(&g_barrier);
    for (int i = 0; i < threads; ++i) pthread_join(t[i], NULL);
    return rank % 8;
}

int main(int argc, char** argv) {
    if (argc > 2 && strcmp(argv[1], "worker") == 0) return worker(atoi(argv[2]));
    const int n = argc > 1 ? atoi(argv[1]) : 256;
    const char* threads = argc > 2 ? argv[2] : "16";
    const char* preload = getenv("STORM_PRELOAD");
    int gate[2];
    if (pipe(gate) != 0) return 2;
    pid_t* pids = calloc((size_t)n, sizeof *pids);
    if (pids == NULL) return 2;
    char size[16];
    snprintf(size, sizeof size, "%d", n);
    for (int i = 0; i < n; ++i) {
        pids[i] = fork();
        if (pids[i] < 0) {
            perror("fork_storm: fork");
            return 2;
        }
        if (pids[i] == 0) {
            close(gate[1]);
            char c;
            while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
            }
            char rank[16];
            snprintf(rank, sizeof rank, "%d", i);
            setenv("OMPI_COMM_WORLD_RANK", rank, 1);
            setenv("OMPI_COMM_WORLD_SIZE", size, 1);
            if (preload != NULL) setenv("LD_PRELOAD", preload, 1);
            char* args[] = {argv[0], (char*)"worker", (char*)threads, NULL};
            execv("/proc/self/exe", args);
            _exit(127);
        }
    }
    close(gate[0]);
    close(gate[1]); /* every child's read returns: all exec at once */
    int ok = 0;
    for (int i = 0; i < n; ++i) {
        int status = 0;
        while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR) {
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == i % 8)
            ++ok;
        else
            fprintf(stderr, "fork_storm: worker %d (pid %d): status 0x%x\n", i, (int)pids[i], status);
    }
    printf("fork_storm: %d workers, %d as expected\n", n, ok);
    free(pids);
    return ok == n ? 0 : 1;
}
