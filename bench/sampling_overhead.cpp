// Wall-time overhead of the software sampler on a memory-bound program, as
// paired ratios: the same work (first-touch a buffer from several threads,
// then stream over it) run with and without sampling, in alternating order.
// The sampler runs as the preload runs it: opened in each thread, rings
// drained by its own thread, summary written at the end.
//
//   build/bench/bench_sampling_overhead [PAIRS] [MiB] [THREADS] [BACKENDS]
//   e.g. build/bench/bench_sampling_overhead 10 512 2 pagefault,cpuclock
// Figures: docs/PERFORMANCE.md, section "Sampling".
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
    std::vector<double> plain, sampled, ratios;
    std::uint64_t samples = 0, lost = 0;
    for (int i = 0; i < pairs; ++i) {
        const auto sampled_run = [&] {
            sampler_reset_for_tests();
            char message[2048];
            if (!sampler_start(config, message, sizeof message)) {
                std::fprintf(stderr, "sampling does not start: %s\n", message);
                std::exit(1);
            }
            const double t = run_workload(bytes, threads, true);
            fs::remove_all(dir);
            fs::create_directories(dir);
            for (std::size_t s = 0; s < sampler_slot_count(); ++s)
                if (const ThreadSlot* slot = sampler_slot(s)) {
                    samples += slot->samples;
                    lost += slot->lost();
                }
            char err[512];
            sampler_finish(dir.c_str(), "bench", err, sizeof err);
            return t;
        };
        double tp, ts;
        if (i % 2 == 0) {
            tp = run_workload(bytes, threads, false);
            ts = sampled_run();
        } else {
            ts = sampled_run();
            tp = run_workload(bytes, threads, false);
        }
        plain.push_back(tp);
        sampled.push_back(ts);
        ratios.push_back(ts / tp);
        std::printf("  pair %2d: plain %.3f s, sampled %.3f s, ratio %.4f\n", i + 1, tp, ts, ts / tp);
    }
    fs::remove_all(dir);
    double mean = 0;
    for (double r : ratios) mean += r;
    mean /= static_cast<double>(ratios.size());
    double var = 0;
    for (double r : ratios) var += (r - mean) * (r - mean);
    const double sem = ratios.size() > 1 ? std::sqrt(var / static_cast<double>(ratios.size() - 1)) /
                                               std::sqrt(static_cast<double>(ratios.size()))
                                         : 0;
    std::printf("workload: %zu MiB first-touched and streamed 3x by %d threads; backends %s; periods: page faults %llu, "
                "cpu-clock %llu ns\n",
                mib, threads, backends, static_cast<unsigned long long>(config.options.pagefault_period),
                static_cast<unsigned long long>(config.options.cpuclock_period_ns));
    std::printf("pairs: %d\n", pairs);
    std::printf("plain wall time:   median %.3f s\n", median(plain));
    std::printf("sampled wall time: median %.3f s\n", median(sampled));
    std::printf("samples: %.0f per run, lost %.0f per run\n", static_cast<double>(samples) / pairs,
                static_cast<double>(lost) / pairs);
    std::printf("overhead (sampled/plain - 1): median %+.2f %%, mean %+.2f %% +- %.2f %% (s.e.)\n",
                (median(ratios) - 1) * 100, (mean - 1) * 100, sem * 100);
    return 0;
}
