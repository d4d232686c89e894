// Preload start-up cost per node: 64 ranks starting at once, each getting the
// node's topology, with snapshots (one discovers and publishes, the others
// map) against 64 independent hwloc discoveries. Real processes, so dynamic
// loading and hwloc's plugin set-up are paid as a rank pays them.
//
//   bench_node_startup [ranks] [rounds]
//
// Prints, for each mode, the wall time of the whole start and the CPU time
// the ranks spent getting the topology (summed over ranks), and the ratio.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <vector>

#include "parsers/hwloc_loader.hpp"
#include "parsers/node_topology_cache.hpp"

using namespace stacksage;
namespace fs = std::filesystem;

namespace {

double thread_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One rank: get the topology the chosen way, report CPU seconds through fd.
[[noreturn]] void rank(bool snapshots, const std::string& path, int report_fd) {
    double t0 = thread_cpu_seconds();
    bool ok;
    if (snapshots) {
        auto topo = load_or_publish_node_topology(path);
        ok = topo && topo->model.find(ComponentType::Thread, 0) != kNoComponent;
    } else {
        auto model = discover_this_machine();
        ok = model && model->find(ComponentType::Thread, 0) != kNoComponent;
    }
    double spent = thread_cpu_seconds() - t0;
    if (!ok) spent = -1;
    (void)!write(report_fd, &spent, sizeof spent);
    _exit(ok ? 0 : 1);
}

struct Round {
    double wall_seconds = 0, topology_cpu_seconds = 0;
    bool ok = true;
};

Round start_ranks(int ranks, bool snapshots, const std::string& path) {
    fs::remove(path);
    int fds[2];
    if (pipe(fds) != 0) std::abort();
    auto t0 = std::chrono::steady_clock::now();
    std::vector<pid_t> pids;
    for (int i = 0; i < ranks; ++i) {
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            rank(snapshots, path, fds[1]);
        }
        pids.push_back(pid);
    }
    close(fds[1]);
    Round r;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        r.ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double spent;
    while (read(fds[0], &spent, sizeof spent) == sizeof spent) r.topology_cpu_seconds += spent;
    close(fds[0]);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 64;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    const std::string path =
        (fs::temp_directory_path() / ("stacksage-startup-" + std::to_string(getpid()) + ".snap")).string();
    double best[2][2] = {{1e9, 1e9}, {1e9, 1e9}};  // [snapshots][wall, cpu]
    // Alternate the modes round by round so both see the same machine noise.
    for (int round = 0; round < rounds; ++round)
        for (int snapshots = 0; snapshots < 2; ++snapshots) {
            Round r = start_ranks(ranks, snapshots != 0, path);
            if (!r.ok) {
                std::fprintf(stderr, "bench_node_startup: a rank failed\n");
                return 1;
            }
            best[snapshots][0] = std::min(best[snapshots][0], r.wall_seconds);
            best[snapshots][1] = std::min(best[snapshots][1], r.topology_cpu_seconds);
        }
    fs::remove(path);
    fs::remove(path + ".lock");
    std::printf("%d ranks, best of %d rounds\n", ranks, rounds);
    std::printf("  64 hwloc discoveries : wall %8.2f ms, topology CPU %8.2f ms\n", best[0][0] * 1e3, best[0][1] * 1e3);
    std::printf("  snapshots            : wall %8.2f ms, topology CPU %8.2f ms\n", best[1][0] * 1e3, best[1][1] * 1e3);
    std::printf("  ratio                : wall %8.1fx, topology CPU %8.1fx\n", best[0][0] / best[1][0],
                best[0][1] / best[1][1]);
    return 0;
}
