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

Result<AnalysedRun> load_and_analyse(const std::string& directory, const AnalysisOptions& options) {
    Result<LoadedRun> loaded = load_run(directory);
    if (!loaded) return loaded.error();
    AnalysedRun out;
    out.run = std::move(loaded.value());
    const auto start = std::chrono::steady_clock::now();
    out.analysis = analyze(out.run.model, options);
    out.analysis_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

std::string timings_line(const AnalysedRun& run, double render_seconds) {
    struct rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    const RunLoadStats& s = run.run.stats;
    return fmt::format(
        "{} hosts, {} logs, {} processes, {} flows: parse {:.2f} s, topology {:.2f} s, model {:.2f} s, "
        "analysis {:.2f} s, render {:.2f} s; peak memory {} MiB",
        s.hosts, s.logs, s.processes, s.flows, s.parse_seconds, s.topology_seconds, s.build_seconds,
        run.analysis_seconds, render_seconds, ru.ru_maxrss / 1024);
}

}  // namespace stacksage::cli
