// Two builds of the recorder side by side on one command: spawn-to-exit
// wall time of runs under each, in alternating order, as paired
// differences. For a change whose cost is too small for the traced/untraced
// ratio of bench_preload_run_overhead (a few milliseconds at exit, say).
//
// Usage: preload_ab_compare A.so B.so PAIRS COMMAND...
//   e.g. OMP_NUM_THREADS=64 OMP_WAIT_POLICY=passive preload_ab_compare
//          old/libstacksage-preload.so build/preload/libstacksage-preload.so 20
//          build/examples/omp_gomp 0.01 0.3
// Each build writes into its own directory for all its runs, so only the
// first run of each writes the topology (done before the timed pairs).
#include <cstdio>

#include "bench/preload_bench_support.hpp"

using namespace stacksage::bench;

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s A.so B.so PAIRS COMMAND...\n", argv[0]);
        return 2;
    }
    const std::string preload[2] = {fs::absolute(argv[1]).string(), fs::absolute(argv[2]).string()};
    const int pairs = std::atoi(argv[3]);
    if (pairs < 1) {
        std::fprintf(stderr, "%s: PAIRS must be at least 1 (got '%s')\n", argv[0], argv[3]);
        return 2;
    }
    const std::vector<std::string> command(argv + 4, argv + argc);
    const fs::path out[2] = {fresh_directory("ab-a"), fresh_directory("ab-b")};
    auto run = [&](int which) {
        return run_child(command, {{"LD_PRELOAD", preload[which]},
                                   {"STACKSAGE_OUTPUT", out[which].string()},
                                   {"STACKSAGE_QUIET", "1"}})
            .seconds;
    };
    run(0);  // the topology, the page cache
    run(1);
    std::vector<double> a, b, differences;
    for (int i = 0; i < pairs; ++i) {
        double ta, tb;
        if (i % 2 == 0) {
            ta = run(0);
            tb = run(1);
        } else {
            tb = run(1);
            ta = run(0);
        }
        a.push_back(ta);
        b.push_back(tb);
        differences.push_back(tb - ta);
    }
    for (const fs::path& d : out) fs::remove_all(d);
    std::printf("pairs: %d\n", pairs);
    std::printf("A: median %.3f ms  (%s)\n", median(a) * 1e3, preload[0].c_str());
    std::printf("B: median %.3f ms  (%s)\n", median(b) * 1e3, preload[1].c_str());
    std::printf("B - A, paired: median %+.3f ms\n", median(differences) * 1e3);
    return 0;
}
