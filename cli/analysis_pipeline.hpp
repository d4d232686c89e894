// What `stacksage report` and `stacksage check` share: load a run directory,
// analyse it, and time the stages (for --timings and the benchmarks).
#pragma once

#include <string>

#include "analysis/analyzer.hpp"
#include "core/result.hpp"
#include "parsers/run_loader.hpp"
#include "reports/report_data.hpp"

namespace stacksage::cli {

struct AnalysedRun {
    LoadedRun run;
    AnalysisResult analysis;
    double analysis_seconds = 0;      // view + checks
    double analysis_cpu_seconds = 0;  // the same, the CPU time of every thread (user + system)

    ReportData report_data() const;
};

// \return the analysed run.
// \return the loader's Error when the directory cannot be analysed at all.
Result<AnalysedRun> load_and_analyse(const std::string& directory, const AnalysisOptions& options = {});

// Keeps the run, unfreed, until the process exits: for a command that
// exits once its report is written. The kernel takes a process's memory
// back at once, where freeing a million ranks' model, view and analysis
// block by block took seconds of one core. The run stays reachable (no
// leak checker reports it).
void keep_until_exit(AnalysedRun&& run);

// "parse 1.20 s, topology 0.05 s, model 0.90 s, analysis 0.30 s (CPU 0.55 s),
// render 0.10 s, peak memory 812 MiB": the stages of one report, for
// --timings. The analysis's CPU time beside its wall time says whether it
// ran on several cores.
std::string timings_line(const AnalysedRun& run, double render_seconds);

}  // namespace stacksage::cli
