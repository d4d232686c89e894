// Wall-time overhead of the software sampler on a memory-bound program, as
// paired ratios: the same work (first-touch a buffer from several threads,
// then stream over it) run with and without sampling, in alternating order.
// The sampler runs as the preload runs it: opened in each thread, rings
// drained by its own thread, summary written at the end.
//
// Each round runs the workload three ways in rotating order: plain, sampled
// without code and data attribution (STACKSAGE_SAMPLE_ATTRIBUTION=0), and
// sampled with it (call chains, stack copies, sites and objects: the
// defaults); the ratios of each sampled run to the plain run of its round,
// and of the attributed run to the unattributed one, give the whole-run
// overhead and the cost of attribution per sample.
//
//   build/bench/bench_sampling_overhead [PAIRS] [MiB] [THREADS] [BACKENDS]
//   e.g. build/bench/bench_sampling_overhead 10 512 2 pagefault,cpuclock
// Figures: docs/PERFORMANCE.md, sections "Sampling" and "Code and data
// attribution (recorder)".
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "preload/sampling/process_sampler.hpp"

using namespace stacksage::sampling;
namespace fs = std::filesystem;

namespace {

double run_workload(std::size_t bytes, int threads, bool sampled) {
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
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
    const int pairs = argc > 1 ? std::atoi(argv[1]) : 10;
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
        std::vector<double> times, ratios;
        std::uint64_t samples = 0, lost = 0;
    };
    Totals bare, off, on;
    std::vector<double> on_over_off;
    const auto sampled_run = [&](const SamplerConfig& c, Totals& totals) {
        sampler_reset_for_tests();
        char message[2048];
        if (!sampler_start(c, message, sizeof message)) {
            std::fprintf(stderr, "sampling does not start: %s\n", message);
            std::exit(1);
        }
        const double t = run_workload(bytes, threads, true);
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (std::size_t s = 0; s < sampler_slot_count(); ++s)
            if (const ThreadSlot* slot = sampler_slot(s)) {
                totals.samples += slot->samples;
                totals.lost += slot->lost();
            }
        char err[512];
        sampler_finish(dir.c_str(), "bench", err, sizeof err);
        return t;
    };
    for (int i = 0; i < pairs; ++i) {
        double t[3];
        for (int k = 0; k < 3; ++k) {
            const int which = (i + k) % 3;  // rotate the order
            t[which] = which == 0 ? run_workload(bytes, threads, false)
                       : which == 1 ? sampled_run(without, off)
                                    : sampled_run(with, on);
        }
        bare.times.push_back(t[0]);
        off.times.push_back(t[1]);
        on.times.push_back(t[2]);
        off.ratios.push_back(t[1] / t[0]);
        on.ratios.push_back(t[2] / t[0]);
        on_over_off.push_back(t[2] / t[1]);
        std::printf("  round %2d: plain %.3f s, sampled %.3f s, sampled+attribution %.3f s\n", i + 1, t[0], t[1], t[2]);
    }
    fs::remove_all(dir);
    const auto mean_sem = [](const std::vector<double>& v, double& mean, double& sem) {
        mean = 0;
        for (double r : v) mean += r;
        mean /= static_cast<double>(v.size());
        double var = 0;
        for (double r : v) var += (r - mean) * (r - mean);
        sem = v.size() > 1 ? std::sqrt(var / static_cast<double>(v.size() - 1)) / std::sqrt(static_cast<double>(v.size()))
                           : 0;
    };
    std::printf("workload: %zu MiB first-touched and streamed 3x by %d threads; backends %s; periods: page faults %llu, "
                "cpu-clock %llu ns; stack copies %u bytes\n",
                mib, threads, backends, static_cast<unsigned long long>(config.options.pagefault_period),
                static_cast<unsigned long long>(config.options.cpuclock_period_ns), with.options.stack_bytes);
    std::printf("rounds: %d\n", pairs);
    std::printf("plain wall time:                       median %.3f s\n", median(bare.times));
    for (const auto* x : {&off, &on}) {
        double mean, sem;
        mean_sem(x->ratios, mean, sem);
        std::printf("%s median %.3f s; samples %.0f, lost %.0f per run; overhead median %+.2f %%, mean %+.2f %% +- %.2f %%\n",
                    x == &off ? "sampled, no attribution:  " : "sampled with attribution: ", median(x->times),
                    static_cast<double>(x->samples) / pairs, static_cast<double>(x->lost) / pairs,
                    (median(x->ratios) - 1) * 100, (mean - 1) * 100, sem * 100);
    }
    double mean, sem;
    mean_sem(on_over_off, mean, sem);
    const double samples_per_run = static_cast<double>(on.samples) / pairs;
    std::printf("attribution (with/without): median %+.2f %%, mean %+.2f %% +- %.2f %%; per sample %.2f us\n",
                (median(on_over_off) - 1) * 100, (mean - 1) * 100, sem * 100,
                samples_per_run > 0 ? (median(on.times) - median(off.times)) / samples_per_run * 1e6 : 0.0);
    return 0;
}
