// The live watcher's cost on a real job: `stacksage run --live=off` and
// `--live=on` on one command, spawn to exit, in alternating order, as paired
// ratios (on / off - 1). Every run records into a fresh directory, so each
// pays the same start (the topology, the logs, the node registry).
//
// Usage: bench_live_watcher_overhead PAIRS COMMAND...
//   e.g. OMP_NUM_THREADS=1 bench_live_watcher_overhead 10
//          mpirun --allow-run-as-root --oversubscribe -np 2 build/examples/mpi_omp --rounds 3000
// Goal (issue 29): the paired median at most +0.5 %. Figures: docs/PERFORMANCE.md,
// "Live warnings".
#include <cstdio>

#include "bench/preload_bench_support.hpp"

using namespace stacksage::bench;

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PAIRS COMMAND...\n", argv[0]);
        return 2;
    }
    const int pairs = std::atoi(argv[1]);
    if (pairs < 1) {
        std::fprintf(stderr, "%s: PAIRS must be at least 1 (got '%s')\n", argv[0], argv[1]);
        return 2;
    }
    const std::vector<std::string> command(argv + 2, argv + argc);
    const fs::path root = fresh_directory("live-bench");
    int serial = 0;
    auto run = [&](bool live) {
        std::vector<std::string> argv = {STACKSAGE_CLI, "run", "-q", live ? "--live=on" : "--live=off", "-o",
                                         (root / ("run-" + std::to_string(serial++))).string(), "--"};
        argv.insert(argv.end(), command.begin(), command.end());
        return run_child(argv, {}).seconds;
    };
    run(false);  // the page cache
    run(true);
    std::vector<double> off, on, ratios;
    for (int i = 0; i < pairs; ++i) {
        double t_off, t_on;
        if (i % 2 == 0) {
            t_off = run(false);
            t_on = run(true);
        } else {
            t_on = run(true);
            t_off = run(false);
        }
        off.push_back(t_off);
        on.push_back(t_on);
        ratios.push_back(t_on / t_off - 1);
        std::printf("pair %2d: off %.3f s, on %.3f s, %+.2f %%\n", i + 1, t_off, t_on, ratios.back() * 100);
        std::fflush(stdout);
    }
    fs::remove_all(root);
    std::printf("pairs: %d\n", pairs);
    std::printf("--live=off: median %.3f s\n", median(off));
    std::printf("--live=on:  median %.3f s\n", median(on));
    std::printf("on / off - 1, paired: median %+.2f %%\n", median(ratios) * 100);
    return 0;
}
