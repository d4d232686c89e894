// The cost per call of the recorder's allocation interposers
// (preload/allocation_events.cpp), as paired ratios against glibc itself:
// the same malloc/free loop calling __libc_malloc/__libc_free directly, and
// through the interposers (linked into this program, as the preload puts
// them in front of glibc), with object tracking off (sampling off), on with
// blocks below the threshold (the filter every small free goes through),
// and on with tracked blocks (the site walk and the block table).
//
//   build/bench/bench_allocation_overhead [PAIRS] [CALLS]
// Figures: docs/PERFORMANCE.md, "Code and data attribution (recorder)".
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "preload/sampling/code_data_attribution.hpp"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
}

using namespace stacksage::sampling;

namespace {

// Keeps the compiler from dropping the pairs.
void* volatile g_sink;

// ns per malloc+free pair of `bytes`, `calls` times, keeping 16 blocks live
// so that glibc does not just hand the same chunk back.
template <class Alloc, class Free>
double ns_per_pair(std::size_t bytes, int calls, Alloc alloc, Free release) {
    void* live[16] = {};
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) {
        const int k = i & 15;
        if (live[k] != nullptr) release(live[k]);
        live[k] = alloc(bytes);
        g_sink = live[k];
    }
    for (void*& p : live)
        if (p != nullptr) release(p);
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void* glibc_malloc(std::size_t n) { return __libc_malloc(n); }
void glibc_free(void* p) { __libc_free(p); }
void* interposed_malloc(std::size_t n) { return std::malloc(n); }
void interposed_free(void* p) { std::free(p); }

struct Case {
    const char* name;
    std::size_t bytes;
    bool tracking;
};

}  // namespace

int main(int argc, char** argv) {
    const int pairs = argc > 1 ? std::atoi(argv[1]) : 11;
    const int calls = argc > 2 ? std::atoi(argv[2]) : 2'000'000;
    AttributionOptions options;  // the defaults: blocks of 1 MiB and more
    const Case cases[] = {
        {"64 B, tracking off (sampling off)", 64, false},
        {"64 B, tracking on (below the threshold)", 64, true},
        {"4 KiB, tracking on (below the threshold)", 4096, true},
        {"2 MiB, tracking on (tracked: site walk, block table)", 2u << 20, true},
    };
    std::printf("malloc+free pairs, %d calls per run, %d paired runs (alternating order); threshold %llu bytes\n", calls,
                pairs, static_cast<unsigned long long>(options.object_min_bytes));
    for (const Case& c : cases) {
        attribution_reset_for_tests();
        if (c.tracking && !attribution_start(options)) {
            std::fprintf(stderr, "attribution does not start\n");
            return 1;
        }
        // Tracked blocks are few and large: fewer calls, the same pairing.
        const int n = c.bytes >= options.object_min_bytes ? calls / 100 : calls;
        ns_per_pair(c.bytes, n / 10, glibc_malloc, glibc_free);  // warm up
        std::vector<double> bare, ours, ratios;
        for (int i = 0; i < pairs; ++i) {
            double b, o;
            if (i % 2 == 0) {
                b = ns_per_pair(c.bytes, n, glibc_malloc, glibc_free);
                o = ns_per_pair(c.bytes, n, interposed_malloc, interposed_free);
            } else {
                o = ns_per_pair(c.bytes, n, interposed_malloc, interposed_free);
                b = ns_per_pair(c.bytes, n, glibc_malloc, glibc_free);
            }
            bare.push_back(b);
            ours.push_back(o);
            ratios.push_back(o / b);
        }
        std::printf("%-55s glibc %8.1f ns, interposed %8.1f ns per pair: ratio median %.3f, +%.1f ns\n", c.name,
                    median(bare), median(ours), median(ratios), median(ours) - median(bare));
        if (c.tracking)
            std::printf("%-55s blocks tracked: %llu\n", "", static_cast<unsigned long long>(attribution_allocations_tracked()));
    }
    attribution_reset_for_tests();
    return 0;
}
