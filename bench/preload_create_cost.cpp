// The added cost of one intercepted pthread_create, measured side by side
// with the uninstrumented one in the same process.
//
// Usage: preload_create_cost PRELOAD.so [rounds]
// The program runs itself again under LD_PRELOAD (output in a fresh
// temporary directory, removed once that run has exited). Each round times one
// create+join through pthread_create and pthread_join (which the preload
// intercepts) and one through glibc's own pthread_create and pthread_join
// (looked up in libc.so.6 directly, which the preload does not see), in
// alternating order; the figures are the median of the per-round
// differences and that median as a share of the bare create+join's median.
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using JoinFn = int (*)(pthread_t, void**);

void* nothing(void*) { return nullptr; }

// The join is part of what is compared: an application under the preload
// pays the intercepted pthread_join too.
double create_join_ns(CreateFn create, JoinFn join) {
    auto start = std::chrono::steady_clock::now();
    pthread_t t;
    if (create(&t, nullptr, nothing, nullptr) != 0) std::abort();
    join(t, nullptr);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
        .count();
}

double percentile(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(p * (v.size() - 1))];
}

int run_under_preload(char** argv) {
    std::string dir = (std::filesystem::temp_directory_path() / "stacksage-bench-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
        std::perror("mkdtemp");
        return 2;
    }
    setenv("LD_PRELOAD", argv[1], 1);
    setenv("STACKSAGE_OUTPUT", dir.c_str(), 1);
    setenv("STACKSAGE_TOPOLOGY", "0", 1);  // start-up cost is measured elsewhere
    setenv("STACKSAGE_BENCH_DIR", dir.c_str(), 1);
    // The measuring process is traced: its output directory is removed here,
    // once it has exited (removing it earlier is a fault the recorder reports).
    const pid_t child = fork();
    if (child == 0) {
        execv("/proc/self/exe", argv);
        std::perror("execv");
        _exit(2);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child) status = 2 << 8;
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PRELOAD.so [rounds]\n", argv[0]);
        return 2;
    }
    const char* dir = std::getenv("STACKSAGE_BENCH_DIR");
    if (dir == nullptr) return run_under_preload(argv);

    const int rounds = argc > 2 ? std::atoi(argv[2]) : 5000;
    void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    auto raw = reinterpret_cast<CreateFn>(dlsym(libc, "pthread_create"));
    auto raw_join = reinterpret_cast<JoinFn>(dlsym(libc, "pthread_join"));
    CreateFn intercepted = &pthread_create;
    JoinFn intercepted_join = &pthread_join;
    if (raw == nullptr || raw == intercepted || raw_join == nullptr || raw_join == intercepted_join) {
        std::fprintf(stderr, "the preload is not active: nothing to compare\n");
        return 2;
    }
    for (int i = 0; i < 500; ++i) {  // warm up both paths (page faults, stack cache)
        create_join_ns(intercepted, intercepted_join);
        create_join_ns(raw, raw_join);
    }
    std::vector<double> with(rounds), without(rounds), added(rounds);
    for (int i = 0; i < rounds; ++i) {
        if (i % 2 == 0) {
            with[i] = create_join_ns(intercepted, intercepted_join);
            without[i] = create_join_ns(raw, raw_join);
        } else {
            without[i] = create_join_ns(raw, raw_join);
            with[i] = create_join_ns(intercepted, intercepted_join);
        }
        added[i] = with[i] - without[i];
    }
    std::printf("rounds: %d\n", rounds);
    std::printf("create+join, uninstrumented: median %.2f us\n", percentile(without, 0.5) / 1000);
    std::printf("create+join, intercepted:    median %.2f us\n", percentile(with, 0.5) / 1000);
    std::printf("added cost per create:       median %.2f us (p25 %.2f, p75 %.2f)\n",
                percentile(added, 0.5) / 1000, percentile(added, 0.25) / 1000,
                percentile(added, 0.75) / 1000);
    // The target is a share of the bare create+join (docs/PERFORMANCE.md).
    std::printf("added / uninstrumented:      %.1f %%\n",
                100.0 * percentile(added, 0.5) / percentile(without, 0.5));
    // The mean shows what a median hides: rare slow rounds (a log chunk being
    // grown and faulted in, once per 256 KiB of log).
    double sum = 0;
    for (double a : added) sum += a;
    std::printf("added cost per create:       mean %.2f us\n", sum / rounds / 1000);
    return 0;
}
