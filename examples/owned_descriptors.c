/* Descriptors the application owns, at numbers the recorder used or uses.
 * Each mode prints what the application found; run with and without the
 * recorder, the output and the exit status must be the same.
 * Usage: owned_descriptors MODE ...
 *   notice-into-data DATA
 *                     closes its standard error and execs itself: the new
 *                     image opens DATA (its first open gets descriptor 2),
 *                     writes a line into it, closes every descriptor above
 *                     it (the recorder's too), uses up the rest (limit 64)
 *                     and forks a child that exits 4 (the recorder cannot
 *                     find its host directory again for the child's log: a
 *                     notice it must not write into DATA); prints what DATA
 *                     holds; exits 3
 *   squat dirs|files SCRATCH
 *                     as a daemon does, closes every descriptor >= 3 (the
 *                     recorder's too), then opens 1100 descriptors of its
 *                     own: its directory SCRATCH/appdirs 1100 times (or 1100
 *                     regular files in SCRATCH/appfiles), and forks: the
 *                     child starts a thread and checks its descriptors, the
 *                     parent checks that its directory stays empty (its
 *                     files unchanged, then unlinks them and keeps them
 *                     open); exits 0 (the child 4) */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ------------------------------------------------------- notice-into-data */

static int mode_notice_into_data(const char* self, const char* data) {
    close(2);
    char* const argv[] = {(char*)self, "notice-into-data-image", (char*)data, NULL};
    execv(self, argv);
    return 1;
}

static int mode_notice_into_data_image(const char* data) {
    const int fd = open(data, O_RDWR | O_CREAT | O_TRUNC, 0644);
    printf("notice-into-data: DATA got descriptor %d\n", fd);
    static const char line[] = "application data\n";
    if (fd < 0 || write(fd, line, sizeof line - 1) != (ssize_t)(sizeof line - 1)) return 1;
    closefrom(fd + 1);
    struct rlimit lim = {64, 64};
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1;
    lim.rlim_cur = 64;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) return 1;
    int first = -1, last = -1;
    for (;;) {
        const int n = open("/dev/null", O_RDONLY);
        if (n < 0) break;
        if (first < 0) first = n;
        last = n;
    }
    const pid_t child = fork();
    if (child == 0) _exit(4);
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return 1;
    for (int n = first; n >= 0 && n <= last; ++n) close(n);
    printf("notice-into-data: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    char held[4096];
    const ssize_t got = pread(fd, held, sizeof held - 1, 0);
    held[got > 0 ? got : 0] = '\0';
    printf("notice-into-data: DATA holds [%s]\n", held);
    return 3;
}

/* ------------------------------------------------------------------ squat */

enum { kSquatted = 1100 };
static int g_fds[kSquatted];

static void* idle(void* arg) { return arg; }

/* How many of the squatted descriptors are still what the application opened:
 * a directory, or a regular file at offset 0 holding its own line. */
static int intact(int dirs) {
    int ok = 0;
    for (int i = 0; i < kSquatted; ++i) {
        struct stat st;
        if (fstat(g_fds[i], &st) != 0) continue;
        if (dirs) {
            ok += S_ISDIR(st.st_mode);
            continue;
        }
        char want[32], got[32] = {0};
        snprintf(want, sizeof want, "file %04d\n", i);
        if (S_ISREG(st.st_mode) && pread(g_fds[i], got, sizeof got - 1, 0) == (ssize_t)strlen(want) &&
            strcmp(got, want) == 0 && lseek(g_fds[i], 0, SEEK_CUR) == 0)
            ++ok;
    }
    return ok;
}

/* Whether the application's directory is still empty. */
static int is_empty_dir(const char* path) {
    DIR* d = opendir(path);
    if (d == NULL) return 0;
    int entries = 0;
    for (struct dirent* e; (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) ++entries;
    closedir(d);
    return entries == 0;
}

static int mode_squat(const char* kind, const char* scratch) {
    const int dirs = strcmp(kind, "dirs") == 0;
    if (!dirs && strcmp(kind, "files") != 0) return 64;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 1;
    if (lim.rlim_cur < 4096) {
        lim.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max > 4096 ? 4096 : lim.rlim_max;
        setrlimit(RLIMIT_NOFILE, &lim);
    }
    char root[2048];
    snprintf(root, sizeof root, "%.2000s/app%s", scratch, kind);
    if (mkdir(root, 0755) != 0 && errno != EEXIST) return 1;
    closefrom(3);
    for (int i = 0; i < kSquatted; ++i) {
        char path[2100];
        if (dirs) {
            g_fds[i] = open(root, O_RDONLY | O_DIRECTORY);
        } else {
            snprintf(path, sizeof path, "%s/f%04d", root, i);
            g_fds[i] = open(path, O_RDWR | O_CREAT | O_EXCL, 0644);
            char line[32];
            const int n = snprintf(line, sizeof line, "file %04d\n", i);
            if (g_fds[i] >= 0 && pwrite(g_fds[i], line, (size_t)n, 0) != n) return 1;
        }
        if (g_fds[i] < 0) {
            printf("squat: open %d failed: %s\n", i, strerror(errno));
            return 1;
        }
    }
    printf("squat: %d %s at descriptors %d to %d\n", kSquatted, kind, g_fds[0], g_fds[kSquatted - 1]);
    const pid_t child = fork();
    if (child == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle, NULL) != 0 || pthread_join(t, NULL) != 0) exit(1);
        printf("squat: the child's %d %s intact: %d\n", kSquatted, kind, intact(dirs));
        exit(4);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) return 1;
    printf("squat: child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("squat: the parent's %d %s intact: %d\n", kSquatted, kind, intact(dirs));
    if (dirs) {
        printf("squat: the directory is %s\n", is_empty_dir(root) ? "empty" : "not empty");
        return 0;
    }
    /* Kept open, their names gone, as temporary files are. */
    int unlinked = 0;
    for (int i = 0; i < kSquatted; ++i) {
        char path[2100];
        snprintf(path, sizeof path, "%s/f%04d", root, i);
        unlinked += unlink(path) == 0;
    }
    printf("squat: %d files unlinked, kept open\n", unlinked);
    return 0;
}

int main(int argc, char** argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char* mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "notice-into-data") == 0 && argc > 2) return mode_notice_into_data(argv[0], argv[2]);
    if (strcmp(mode, "notice-into-data-image") == 0 && argc > 2) return mode_notice_into_data_image(argv[2]);
    if (strcmp(mode, "squat") == 0 && argc > 3) return mode_squat(argv[2], argv[3]);
    fprintf(stderr, "usage: %s notice-into-data DATA | squat dirs|files SCRATCH\n", argv[0]);
    return 64;
}
