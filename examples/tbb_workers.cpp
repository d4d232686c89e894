// Worker processes that compute with TBB; the parent is the first of them,
// then waits for the others. TBB reads no environment variable for its thread count: a program
// limits it with tbb::global_control (max_allowed_parallelism) or runs its
// work in a tbb::task_arena of the size it wants. Here `threads` (0: TBB's
// default, one per CPU the process may use) sets the global_control.
// Usage: tbb_workers [threads] [processes] [seconds]  (default 0, 2, 1 s)
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <tbb/global_control.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

namespace {

int work(int threads, double seconds) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      static_cast<std::size_t>(threads));
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    double total = 0;
    while (std::chrono::steady_clock::now() < end) {
        // Chunks of about a millisecond: long enough that every thread of the
        // pool takes part, short enough to stop on time.
        total += tbb::parallel_deterministic_reduce(
            tbb::blocked_range<int>(0, 64), 0.0,
            [](const tbb::blocked_range<int>& r, double sum) {
                for (int i = r.begin(); i != r.end(); ++i)
                    for (int k = 1; k <= 20000; ++k) sum += 1.0 / (k + i);
                return sum;
            },
            [](double x, double y) { return x + y; });
    }
    std::printf("worker %d: %g\n", static_cast<int>(getpid()), total);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
    const int processes = argc > 2 ? std::atoi(argv[2]) : 2;
    const double seconds = argc > 3 ? std::atof(argv[3]) : 1.0;
    int failed = 0, status = 0;
    // The others first, then the parent's own share (TBB's pool is started
    // after the forks, in each process).
    for (int p = processes - 1; p >= 0; --p) {
        const pid_t pid = p == 0 ? 0 : fork();
        if (pid < 0) return 1;
        if (pid != 0) continue;
        const int rc = work(threads, seconds);
        std::fflush(stdout);
        if (p > 0) _exit(rc);
        failed = rc != 0;
    }
    while (wait(&status) > 0)
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
    return failed;
}
