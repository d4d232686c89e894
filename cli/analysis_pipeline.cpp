#include "cli/analysis_pipeline.hpp"

#include <sys/resource.h>

#include <chrono>

#include <fmt/core.h>

namespace stacksage::cli {

ReportData AnalysedRun::report_data() const {
    ReportData d;
    d.analysis = &analysis;
    d.notes = &run.notes;
    d.directory = run.directory;
    d.logs = run.stats.logs;
    d.logs_skipped = run.stats.logs_skipped;
    return d;
}

namespace {

// The process's CPU time so far, every thread's, user and system.
double process_cpu_seconds() {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return seconds(ru.ru_utime) + seconds(ru.ru_stime);
}

}  // namespace

void keep_until_exit(AnalysedRun&& run) {
    static AnalysedRun* kept = nullptr;
    delete kept;  // a second run in one process (tests): the first is no longer needed
    kept = new AnalysedRun(std::move(run));
}

Result<AnalysedRun> load_and_analyse(const std::string& directory, const AnalysisOptions& options) {
    Result<LoadedRun> loaded = load_run(directory);
    if (!loaded) return loaded.error();
    AnalysedRun out;
    out.run = std::move(loaded.value());
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    out.analysis = analyze(out.run.model, options);
    out.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.analysis_cpu_seconds = process_cpu_seconds() - cpu_start;
    return out;
}

std::string timings_line(const AnalysedRun& run, double render_seconds) {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const RunLoadStats& s = run.run.stats;
    return fmt::format(
        "{} hosts, {} logs, {} processes, {} flows: parse {:.2f} s, topology {:.2f} s, model {:.2f} s, "
        "analysis {:.2f} s (CPU {:.2f} s), render {:.2f} s; peak memory {} MiB",
        s.hosts, s.logs, s.processes, s.flows, s.parse_seconds, s.topology_seconds, s.build_seconds,
        run.analysis_seconds, run.analysis_cpu_seconds, render_seconds, ru.ru_maxrss / 1024);
}

}  // namespace stacksage::cli
