// What sampling adds to a whole program under the real preload, as paired
// ratios within rounds. Each round runs the same command four ways, in
// rotating order:
//
//   untraced   no preload at all
//   traced     the preload, sampling off (STACKSAGE_SAMPLE=off): the baseline
//              for sampling's cost, the same process image, allocator
//              interposers and exit-time writing as the sampled legs
//   sampled    the preload, BACKENDS, no code and data attribution
//   attributed the preload, BACKENDS, with attribution (the defaults)
//
// Two measures per leg: the wall time from spawn to exit, and the CPU time
// of the process and the processes it waited for (an MPI launcher's ranks).
// On cores other programs share, the wall time is mostly the wait for a
// CPU, which differs from leg to leg; the CPU time is the work the recorder
// adds. The minor page faults per leg show whether the legs' memory
// behaviour is the same.
//
// Usage: bench_sampling_run_overhead PRELOAD.so ROUNDS BACKENDS COMMAND...
//   e.g. bench_sampling_run_overhead build/preload/libstacksage-preload.so 15 pagefault
//          build/examples/memory_first_touch --threads 1 --mib 512 --passes 3
// Each traced leg writes into its own directory for all its rounds (its
// first, untimed run writes the topology). Figures: docs/PERFORMANCE.md,
// "The software sampler on a memory-bound program".
#include <cstdio>

#include "bench/paired_ratio_summary.hpp"
#include "bench/preload_bench_support.hpp"

using namespace stacksage::bench;

namespace {

enum LegKind { kUntraced, kTraced, kSampled, kAttributed, kLegKinds };
const char* const kLegNames[kLegKinds] = {"untraced", "traced, sampling off", "sampled, no attribution",
                                          "sampled with attribution"};

struct Comparison {
    const char* what;
    LegKind numerator, denominator;
};
const Comparison kComparisons[] = {
    {"sampling (sampled / traced)", kSampled, kTraced},
    {"sampling with attribution (attributed / traced)", kAttributed, kTraced},
    {"attribution alone (attributed / sampled)", kAttributed, kSampled},
    {"tracing alone (traced / untraced)", kTraced, kUntraced},
    {"the whole recorder (attributed / untraced)", kAttributed, kUntraced},
};

}  // namespace

int main(int argc, char** argv) {
    if (argc < 5) {
        std::fprintf(stderr, "usage: %s PRELOAD.so ROUNDS BACKENDS COMMAND...\n", argv[0]);
        return 2;
    }
    const std::string preload = fs::absolute(argv[1]).string();
    const int rounds = std::atoi(argv[2]);
    if (rounds < 1) {
        std::fprintf(stderr, "%s: ROUNDS must be at least 1 (got '%s')\n", argv[0], argv[2]);
        return 2;
    }
    const std::string backends = argv[3];
    const std::vector<std::string> command(argv + 4, argv + argc);

    fs::path out[kLegKinds];
    std::map<std::string, std::string> env[kLegKinds];
    for (int k = kTraced; k < kLegKinds; ++k) {
        out[k] = fresh_directory("sampling-run");
        env[k] = {{"LD_PRELOAD", preload}, {"STACKSAGE_OUTPUT", out[k].string()}, {"STACKSAGE_QUIET", "1"}};
    }
    env[kTraced]["STACKSAGE_SAMPLE"] = "off";
    env[kSampled]["STACKSAGE_SAMPLE"] = backends;
    env[kSampled]["STACKSAGE_SAMPLE_ATTRIBUTION"] = "0";
    env[kAttributed]["STACKSAGE_SAMPLE"] = backends;
    env[kAttributed]["STACKSAGE_SAMPLE_ATTRIBUTION"] = "1";

    std::vector<ChildRun> legs[kLegKinds];
    try {
        for (int k = 0; k < kLegKinds; ++k) run_child(command, env[k]);  // the page cache, the topology
        for (int i = 0; i < rounds; ++i) {
            for (int j = 0; j < kLegKinds; ++j) {
                const int k = (i + j) % kLegKinds;  // rotate the order
                legs[k].push_back(run_child(command, env[k]));
            }
            std::printf("  round %2d, wall/CPU s:", i + 1);
            for (int k = 0; k < kLegKinds; ++k)
                std::printf(" %s %.3f/%.3f;", kLegNames[k], legs[k].back().seconds, legs[k].back().cpu_seconds);
            std::printf("\n");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s: the command must run and exit 0 in every leg\n", argv[0], e.what());
        for (const fs::path& d : out)
            if (!d.empty()) fs::remove_all(d);
        return 1;
    }
    for (const fs::path& d : out)
        if (!d.empty()) fs::remove_all(d);

    std::printf("rounds: %d; backends: %s\n", rounds, backends.c_str());
    for (int k = 0; k < kLegKinds; ++k) {
        std::vector<double> wall, cpu, faults, preempted;
        for (const ChildRun& r : legs[k]) {
            wall.push_back(r.seconds);
            cpu.push_back(r.cpu_seconds);
            faults.push_back(static_cast<double>(r.minor_faults));
            preempted.push_back(static_cast<double>(r.preemptions));
        }
        std::printf("%-25s wall %.3f s, CPU %.3f s, minor page faults %.0f, preempted %.0f times (medians)\n",
                    kLegNames[k], median_of(wall), median_of(cpu), median_of(faults), median_of(preempted));
    }
    for (const Comparison& c : kComparisons) {
        std::vector<double> wall, cpu;
        for (int i = 0; i < rounds; ++i) {
            wall.push_back(legs[c.numerator][i].seconds / legs[c.denominator][i].seconds);
            cpu.push_back(legs[c.numerator][i].cpu_seconds / legs[c.denominator][i].cpu_seconds);
        }
        std::printf("%s:\n    CPU time  ", c.what);
        print_ratio_summary(summarize_ratios(cpu));
        std::printf("\n    wall time ");
        print_ratio_summary(summarize_ratios(wall));
        std::printf("\n");
    }
    return 0;
}
