/* fork + exec: the child re-executes this program with "child", which
 * starts a thread. The recorder must give the forked child its own log and
 * trace the exec'ed image again through the inherited environment. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void* work(void* unused) {
    (void)unused;
    return NULL;
}

int main(int argc, char** argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, work, NULL);
        pthread_join(t, NULL);
        return 7;
    }
    pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "child", (char*)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("fork_exec: child %d exited with %d\n", (int)pid, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 1;
}
