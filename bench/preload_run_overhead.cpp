// Whole-run overhead of the recorder on a program that creates its threads
// once and computes: the wall time of traced and untraced runs of the same
// command, in alternating order, as paired ratios.
//
// Usage: preload_run_overhead PRELOAD.so PAIRS COMMAND...
//   e.g. preload_run_overhead build/preload/libstacksage-preload.so 10
//          build/examples/omp_gomp --rounds 400
// Each traced run writes into a fresh directory (so it also writes the
// topology and the process model, as a real first run does).
#include <cmath>
#include <cstdio>

#include "bench/preload_bench_support.hpp"

using namespace stacksage::bench;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s PRELOAD.so PAIRS COMMAND...\n", argv[0]);
        return 2;
    }
    const std::string preload = fs::absolute(argv[1]).string();
    const int pairs = std::atoi(argv[2]);
    std::vector<std::string> command(argv + 3, argv + argc);

    run_child(command, {});  // warm the page cache
    std::vector<double> ratios, plain, traced;
    for (int i = 0; i < pairs; ++i) {
        fs::path out = fresh_directory("overhead");
        std::map<std::string, std::string> with = {{"LD_PRELOAD", preload}, {"STACKSAGE_OUTPUT", out.string()}};
        double t_plain, t_traced;
        if (i % 2 == 0) {
            t_plain = run_child(command, {}).seconds;
            t_traced = run_child(command, with).seconds;
        } else {
            t_traced = run_child(command, with).seconds;
            t_plain = run_child(command, {}).seconds;
        }
        fs::remove_all(out);
        std::printf("  pair %2d: untraced %.3f s, traced %.3f s, ratio %.4f\n", i + 1, t_plain, t_traced,
                    t_traced / t_plain);
        plain.push_back(t_plain);
        traced.push_back(t_traced);
        ratios.push_back(t_traced / t_plain);
    }
    double mean = 0;
    for (double r : ratios) mean += r;
    mean /= static_cast<double>(ratios.size());
    double var = 0;
    for (double r : ratios) var += (r - mean) * (r - mean);
    double sem = std::sqrt(var / static_cast<double>(ratios.size() - (ratios.size() > 1))) /
                 std::sqrt(static_cast<double>(ratios.size()));
    std::printf("pairs: %d\n", pairs);
    std::printf("untraced wall time: median %.3f s\n", median(plain));
    std::printf("traced wall time:   median %.3f s\n", median(traced));
    std::printf("overhead (traced/untraced - 1): median %+.2f %%, mean %+.2f %% +- %.2f %% (s.e.)\n",
                (median(ratios) - 1) * 100, (mean - 1) * 100, sem * 100);
    return 0;
}
