// Overhead of the software sampler on a memory-bound program, as paired
// ratios: the same work (first-touch a buffer from several threads, then
// stream over it) run with and without sampling, in rotating order, all in
// this one process (the same allocator, mappings and page-fault path in
// every leg). The sampler runs as the preload runs it: opened in each
// thread, rings drained by its own thread, summary written at the end.
//
// Each round runs the workload three ways in rotating order: plain, sampled
// without code and data attribution (STACKSAGE_SAMPLE_ATTRIBUTION=0), and
// sampled with it (call chains, stack copies, sites and objects: the
// defaults). Two measures per leg: the wall time, and the process's CPU
// time (all its threads, the drain thread and the kernel's work for the
// samples included). On a machine whose cores other programs share, a
// leg's wall time is mostly its wait for a CPU (the scheduler's share,
// which differs from leg to leg), so the CPU-time ratio is the cost the
// sampler adds; the wall-time ratio says the same only on idle cores. The
// page faults per leg show the memory behaviour is the same in each; the
// preemptions, how contended the cores were.
//
//   build/bench/bench_sampling_overhead [ROUNDS] [MiB] [THREADS] [BACKENDS]
//   e.g. build/bench/bench_sampling_overhead 10 512 2 pagefault,cpuclock
// Figures: docs/PERFORMANCE.md, sections "Sampling" and "Code and data
// attribution (recorder)". The whole program under the real preload:
// bench_sampling_run_overhead.
#include <pthread.h>
#include <sys/resource.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/paired_ratio_summary.hpp"
#include "preload/sampling/process_sampler.hpp"

using namespace stacksage::sampling;
using namespace stacksage::bench;
namespace fs = std::filesystem;

namespace {

// One leg's figures.
struct Leg {
    double wall = 0, cpu = 0;                 // seconds
    long minor_faults = 0, preemptions = 0;  // the process's, during the leg
};

double process_cpu_seconds() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

Leg run_workload(std::size_t bytes, int threads, bool sampled) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    const double cpu0 = process_cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    char* buf = static_cast<char*>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    const std::size_t slice = bytes / static_cast<std::size_t>(threads);
    std::vector<std::thread> pool;
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(threads));
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            if (sampled) sampler_thread_begin();
            char* mine = buf + slice * static_cast<std::size_t>(t);
            // First touch (page faults), then three streaming passes.
            for (std::size_t i = 0; i < slice; i += 4096) mine[i] = static_cast<char>(i);
            std::uint64_t sum = 0;
            for (int pass = 0; pass < 3; ++pass)
                for (std::size_t i = 0; i < slice; i += 64) sum += static_cast<unsigned char>(mine[i]);
            sums[static_cast<std::size_t>(t)] = sum;
            if (sampled) sampler_thread_end();
        });
    for (auto& th : pool) th.join();
    ::munmap(buf, bytes);
    Leg leg;
    leg.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    leg.cpu = process_cpu_seconds() - cpu0;
    getrusage(RUSAGE_SELF, &after);
    leg.minor_faults = after.ru_minflt - before.ru_minflt;
    leg.preemptions = after.ru_nivcsw - before.ru_nivcsw;
    return leg;
}

}  // namespace

int main(int argc, char** argv) {
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
    if (rounds < 1) {
        std::fprintf(stderr, "%s: ROUNDS must be at least 1 (got '%s')\n", argv[0], argc > 1 ? argv[1] : "");
        return 2;
    }
    const std::size_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 512;
    const int threads = argc > 3 ? std::atoi(argv[3]) : 2;
    const char* backends = argc > 4 ? argv[4] : "pagefault,cpuclock";
    const std::size_t bytes = mib << 20;
    const fs::path dir = fs::temp_directory_path() / ("stacksage-overhead-" + std::to_string(::getpid()));

    SamplerConfig config;
    char error[512];
    // Periods and ring size from the environment, as the preload reads them
    // (STACKSAGE_SAMPLE_PERIOD_PAGEFAULT, ...).
    if (!options_from_environment(config.options, error, sizeof error)) {
        std::fprintf(stderr, "%s\n", error);
        return 2;
    }
    if (!parse_backend_selection(backends, config.options.selection, error, sizeof error)) {
        std::fprintf(stderr, "%s\n", error);
        return 2;
    }
    config.start_thread = &pthread_create;
    config.pid = ::getpid();

    {
        // Say what this machine can sample, and why not the rest.
        sampler_reset_for_tests();
        char message[2048] = {};
        const bool ok = sampler_start(config, message, sizeof message);
        std::printf("%s\n", message);
        sampler_reset_for_tests();
        if (!ok) return 1;
    }
    run_workload(bytes, threads, false);  // warm up
    SamplerConfig without = config;
    without.options.attribution = false;
    SamplerConfig with = config;
    with.options.attribution = true;
    struct Totals {
        std::vector<Leg> legs;
        std::vector<double> wall_ratios, cpu_ratios;  // against plain, within the round
        std::uint64_t samples = 0, lost = 0;
    };
    Totals bare, off, on;
    std::vector<double> on_over_off_wall, on_over_off_cpu;
    const auto sampled_run = [&](const SamplerConfig& c, Totals& totals) {
        sampler_reset_for_tests();
        char message[2048];
        if (!sampler_start(c, message, sizeof message)) {
            std::fprintf(stderr, "sampling does not start: %s\n", message);
            std::exit(1);
        }
        const Leg leg = run_workload(bytes, threads, true);
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (std::size_t s = 0; s < sampler_slot_count(); ++s)
            if (const ThreadSlot* slot = sampler_slot(s)) {
                totals.samples += slot->samples;
                totals.lost += slot->lost();
            }
        char err[512];
        sampler_finish(dir.c_str(), "bench", err, sizeof err);
        return leg;
    };
    for (int i = 0; i < rounds; ++i) {
        Leg t[3];
        for (int k = 0; k < 3; ++k) {
            const int which = (i + k) % 3;  // rotate the order
            t[which] = which == 0 ? run_workload(bytes, threads, false)
                       : which == 1 ? sampled_run(without, off)
                                    : sampled_run(with, on);
        }
        bare.legs.push_back(t[0]);
        off.legs.push_back(t[1]);
        on.legs.push_back(t[2]);
        off.wall_ratios.push_back(t[1].wall / t[0].wall);
        on.wall_ratios.push_back(t[2].wall / t[0].wall);
        off.cpu_ratios.push_back(t[1].cpu / t[0].cpu);
        on.cpu_ratios.push_back(t[2].cpu / t[0].cpu);
        on_over_off_wall.push_back(t[2].wall / t[1].wall);
        on_over_off_cpu.push_back(t[2].cpu / t[1].cpu);
        std::printf("  round %2d: wall/CPU s: plain %.3f/%.3f, sampled %.3f/%.3f, sampled+attribution %.3f/%.3f; "
                    "preempted %ld/%ld/%ld times\n",
                    i + 1, t[0].wall, t[0].cpu, t[1].wall, t[1].cpu, t[2].wall, t[2].cpu, t[0].preemptions,
                    t[1].preemptions, t[2].preemptions);
    }
    fs::remove_all(dir);
    const auto medians = [](const std::vector<Leg>& legs, double Leg::*field) {
        std::vector<double> v;
        for (const Leg& l : legs) v.push_back(l.*field);
        return median_of(v);
    };
    const auto median_count = [](const std::vector<Leg>& legs, long Leg::*field) {
        std::vector<double> v;
        for (const Leg& l : legs) v.push_back(static_cast<double>(l.*field));
        return median_of(v);
    };
    std::printf("workload: %zu MiB first-touched and streamed 3x by %d threads; backends %s; periods: page faults %llu, "
                "cpu-clock %llu ns; stack copies %u bytes\n",
                mib, threads, backends, static_cast<unsigned long long>(config.options.pagefault_period),
                static_cast<unsigned long long>(config.options.cpuclock_period_ns), with.options.stack_bytes);
    std::printf("rounds: %d\n", rounds);
    for (const auto* x : {&bare, &off, &on}) {
        std::printf("%s wall %.3f s, CPU %.3f s, page faults %.0f, preempted %.0f times (medians)",
                    x == &bare ? "plain:                   " : x == &off ? "sampled, no attribution: "
                                                                          : "sampled with attribution:",
                    medians(x->legs, &Leg::wall), medians(x->legs, &Leg::cpu),
                    median_count(x->legs, &Leg::minor_faults), median_count(x->legs, &Leg::preemptions));
        if (x != &bare)
            std::printf("; samples %.0f, lost %.0f per run", static_cast<double>(x->samples) / rounds,
                        static_cast<double>(x->lost) / rounds);
        std::printf("\n");
    }
    for (const auto* x : {&off, &on}) {
        std::printf("%s CPU time ", x == &off ? "overhead, no attribution:  " : "overhead with attribution: ");
        print_ratio_summary(summarize_ratios(x->cpu_ratios));
        std::printf("; wall time ");
        print_ratio_summary(summarize_ratios(x->wall_ratios));
        std::printf("\n");
    }
    const double samples_per_run = static_cast<double>(on.samples) / rounds;
    std::printf("attribution (with/without):  CPU time ");
    print_ratio_summary(summarize_ratios(on_over_off_cpu));
    std::printf("; wall time ");
    print_ratio_summary(summarize_ratios(on_over_off_wall));
    std::printf("; CPU per sample %.2f us\n",
                samples_per_run > 0
                    ? (medians(on.legs, &Leg::cpu) - medians(off.legs, &Leg::cpu)) / samples_per_run * 1e6
                    : 0.0);
    return 0;
}
