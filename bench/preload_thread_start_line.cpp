// What formatting one thread_start line costs (the one line of a short
// thread, written at its end on the application's thread): the recorder's
// own formatter (preload/thread_start_line.hpp) against the generic JsonLine
// build of the same bytes (tests/preload/thread_start_line_reference.hpp),
// alternating in batches. Prints ns per line for each, median of the batches.
//
// Usage: bench_preload_thread_start_line [lines]   (default 2,000,000)
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "preload/module_table.hpp"
#include "preload/thread_start_line.hpp"
#include "tests/preload/thread_start_line_reference.hpp"

namespace {

using stacksage::preload::Launch;
using stacksage::preload::ThreadEnding;

double now_ns() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);  // its own CPU time: the host is shared
    return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

void* start_routine(void*) { return nullptr; }

// Formats `lines` lines with `format`, varying the clock readings as
// successive threads do; returns ns per line.
template <class Format>
double time_lines(int lines, Launch& l, ThreadEnding& ending, Format&& format) {
    char buf[768];
    std::size_t total = 0;
    const double start = now_ns();
    for (int i = 0; i < lines; ++i) {
        l.start_ns.store(l.start_ns.load(std::memory_order_relaxed) + 7919, std::memory_order_relaxed);
        ending.end_ns += 7919;
        total += format(buf, sizeof buf, l, 4100, &ending);
        asm volatile("" : : "r"(buf) : "memory");  // the line is "used"
    }
    const double ns = (now_ns() - start) / lines;
    if (total == 0) std::abort();
    return ns;
}

}  // namespace

int main(int argc, char** argv) {
    const int lines = argc > 1 ? std::max(1000, std::atoi(argv[1])) : 2'000'000;
    // A short thread of a program in /usr/local/bin, as in bench_preload_create_cost.
    static const std::string json = "\"/usr/local/bin/bench_preload_create_cost\"";
    stacksage::preload::Module program;
    program.start = reinterpret_cast<std::uintptr_t>(&start_routine) - 0x2a10;
    program.path = "/usr/local/bin/bench_preload_create_cost";
    program.json = json.c_str();
    program.json_len = json.size();
    Launch l;
    l.start = &start_routine;
    l.creator_tid = 412'345;
    l.creator = &program;
    l.start_module = &program;
    l.create_ns = 73'012'345'678'901;
    l.creator_cpu_ns = 1'234'567;
    l.start_mask.used_words = 1;
    l.start_mask.valid = true;
    l.start_mask.words[0] = 3;
    l.start_ns.store(73'012'345'688'000);
    l.tid = 412'399;
    l.seq = 12'345;
    l.start_cpu = 1;
    l.pthread = 0x7f0123456640;
    ThreadEnding ending{"return", 73'012'345'691'000, 0};

    const int batches = 21;
    std::vector<double> fast, generic;
    for (int b = 0; b < batches; ++b) {
        fast.push_back(time_lines(lines / batches, l, ending, stacksage::preload::format_thread_start_line));
        generic.push_back(
            time_lines(lines / batches, l, ending, stacksage::preload::testing::reference_thread_start_line));
    }
    std::sort(fast.begin(), fast.end());
    std::sort(generic.begin(), generic.end());
    char buf[768];
    const std::size_t n = stacksage::preload::format_thread_start_line(buf, sizeof buf, l, 4100, &ending);
    std::printf("thread_start line of %zu bytes, %d lines in %d batches\n", n, lines, batches);
    std::printf("own formatter:    median %.1f ns per line (batches %.1f-%.1f)\n", fast[batches / 2], fast.front(),
                fast.back());
    std::printf("generic JsonLine: median %.1f ns per line (batches %.1f-%.1f)\n", generic[batches / 2],
                generic.front(), generic.back());
    return 0;
}
