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
    double analysis_seconds = 0;  // view + checks

    ReportData report_data() const;
};

// \return the analysed run.
// \return the loader's Error when the directory cannot be analysed at all.
Result<AnalysedRun> load_and_analyse(const std::string& directory, const AnalysisOptions& options = {});

// "parse 1.20 s, topology 0.05 s, model 0.90 s, analysis 0.30 s, render 0.10 s,
// peak memory 812 MiB": the stages of one report, for --timings.
std::string timings_line(const AnalysedRun& run, double render_seconds);

}  // namespace stacksage::cli
