// Unwinding and symbolizing after the run (issue 30): stack copies of real
// call paths, taken in this program the way the sampler's kernel copy gives
// them (registers ip, sp, bp and the user stack from sp up), unwound with
// libunwind's remote interface over the copies and the mapped files, every
// frame symbolized with libdwfl. Goal: >= 100,000 samples per second per
// core. Figures: docs/PERFORMANCE.md, "Code and data attribution (after the
// run)".
//
//   build/bench/bench_code_attribution --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "parsers/code_location/attribution_resolver.hpp"
#include "parsers/code_location/module_file.hpp"
#include "parsers/code_location/process_address_space.hpp"
#include "parsers/code_location/stack_unwinder.hpp"
#include "parsers/code_location/symbolizer.hpp"
#include "tests/support/this_process_modules.hpp"

using namespace stacksage;

namespace {

// The copy reaches the stack's end, as the copy of a shallow stack does.
std::uint64_t stack_end(std::uint64_t sp) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const std::uint64_t a = std::stoull(line.substr(0, line.find('-')), nullptr, 16);
        const std::uint64_t b = std::stoull(line.substr(line.find('-') + 1), nullptr, 16);
        if (sp >= a && sp < b) return b;
    }
    return sp;
}

std::vector<SampledSite> captured;
volatile std::uint64_t sink;

__attribute__((noinline)) void copy_stack(int variant) {
    std::uint64_t ip, sp, bp;
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
    SampledSite s;
    s.id = static_cast<std::int64_t>(captured.size());
    s.ip = s.reg_ip = ip;
    s.reg_sp = sp;
    s.reg_bp = bp;
    s.unwind = "stack";
    s.samples = 1;
    const auto* p = reinterpret_cast<const std::uint8_t*>(sp);
    s.stack.assign(p, p + (stack_end(sp) - sp));
    captured.push_back(std::move(s));
    sink = sink + static_cast<std::uint64_t>(variant);
}

// Call paths of different depths and shapes: three functions recursing into
// each other, the copy taken at the leaf.
__attribute__((noinline)) void level_a(int depth, int variant);
__attribute__((noinline)) void level_b(int depth, int variant) {
    if (depth == 0) copy_stack(variant);
    else level_a(depth - 1, variant);
    sink = sink + 1;
}
__attribute__((noinline)) void level_c(int depth, int variant) {
    if (depth == 0) copy_stack(variant);
    else level_b(depth - 1, variant);
    sink = sink + 2;
}
__attribute__((noinline)) void level_a(int depth, int variant) {
    if (depth == 0) copy_stack(variant);
    else if (variant % 2) level_b(depth - 1, variant);
    else level_c(depth - 1, variant);
    sink = sink + 3;
}

struct Capture {
    std::vector<SampledModule> modules;
    std::vector<SampledSite> sites;
};

const Capture& capture() {
    static const Capture c = [] {
        for (int variant = 0; variant < 64; ++variant) level_a(2 + variant % 12, variant);
        return Capture{test::this_process_modules(/*with_build_ids=*/true), captured};
    }();
    return c;
}

// The steady state: sites unwound and their frames symbolized, the
// symbolizer's cache and libunwind's warm (a run's samples revisit the same
// functions).
void BM_UnwindAndSymbolize(benchmark::State& state) {
    const Capture& c = capture();
    ProcessAddressSpace space(c.modules);
    ModuleFiles files;
    StackUnwinder unwinder(space, files);
    ModuleSymbolTables tables;
    Symbolizer symbols(space, files, tables);
    std::size_t frames = 0, complete = 0, i = 0;
    for (auto _ : state) {
        const SampledSite& s = c.sites[i++ % c.sites.size()];
        const UnwoundStack u = unwinder.unwind(s);
        complete += u.outcome == UnwindOutcome::Complete;
        for (std::size_t f = 0; f < u.frames.size(); ++f) benchmark::DoNotOptimize(symbols.code(u.frames[f], f > 0));
        frames += u.frames.size();
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
    state.counters["frames_per_sample"] = static_cast<double>(frames) / static_cast<double>(state.iterations());
    // Every copy reaches the outermost frame: a failing unwind would be cheaper and not a fair figure.
    state.counters["complete_share"] = static_cast<double>(complete) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_UnwindAndSymbolize);

// Unwinding alone.
void BM_Unwind(benchmark::State& state) {
    const Capture& c = capture();
    ProcessAddressSpace space(c.modules);
    ModuleFiles files;
    StackUnwinder unwinder(space, files);
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(unwinder.unwind(c.sites[i++ % c.sites.size()]));
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_Unwind);

// A whole summary's sites resolved from nothing: files opened, debug
// information loaded, every site unwound and symbolized (the start-up cost,
// paid once per run for each program and library).
void BM_ResolveSummaryCold(benchmark::State& state) {
    const Capture& c = capture();
    SampleSummary summary;
    summary.modules = c.modules;
    summary.sites = c.sites;
    for (auto _ : state) {
        AttributionResolver r(summary);
        benchmark::DoNotOptimize(r.site(0));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c.sites.size()));
    state.counters["sites"] = static_cast<double>(c.sites.size());
}
BENCHMARK(BM_ResolveSummaryCold)->Unit(benchmark::kMillisecond);

// The next process of the same program in the same run (another rank): the
// files and their symbols are shared (CodeFilesCache); only its own stacks
// are unwound, and its addresses looked up in the shared tables.
void BM_ResolveSummaryOfAnotherRank(benchmark::State& state) {
    const Capture& c = capture();
    SampleSummary summary;
    summary.modules = c.modules;
    summary.sites = c.sites;
    CodeFilesCache shared;
    { AttributionResolver first(summary, &shared); }
    for (auto _ : state) {
        AttributionResolver r(summary, &shared);
        benchmark::DoNotOptimize(r.site(0));
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c.sites.size()));
    state.counters["sites"] = static_cast<double>(c.sites.size());
}
BENCHMARK(BM_ResolveSummaryOfAnotherRank)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
