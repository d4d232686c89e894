// A run directory loaded and analysed, and the ReportData a report renders
// from it: what the report tests start from (`stacksage report` does the
// same in cli/analysis_pipeline.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"
#include "parsers/run_loader.hpp"
#include "reports/json_report.hpp"
#include "reports/report_data.hpp"
#include "reports/text_report.hpp"

namespace stacksage::testing {

struct AnalysedRun {
    LoadedRun run;
    AnalysisResult analysis;
    ReportData data() const {
        ReportData d;
        d.analysis = &analysis;
        d.notes = &run.notes;
        d.directory = run.directory;
        d.logs = run.stats.logs;
        d.logs_skipped = run.stats.logs_skipped;
        return d;
    }
};

// Loads and analyses the run at `directory`; a run that does not load fails
// the test (and is analysed empty).
inline AnalysedRun analyse_run(const std::string& directory) {
    Result<LoadedRun> r = load_run(directory);
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    AnalysedRun out{r ? std::move(r.value()) : LoadedRun{}, {}};
    out.analysis = analyze(out.run.model);
    return out;
}

// An analysed run with its terminal and JSON reports, as `stacksage report`
// renders them.
struct ReportedRun : AnalysedRun {
    std::string text;
    nlohmann::json json;
};

// Loads, analyses and reports the run at `directory` (SHOW_REPORT=1 in the
// environment prints the terminal report, for writing a test).
inline ReportedRun report_of(const std::string& directory) {
    ReportedRun r{analyse_run(directory), {}, {}};
    const ReportData data = r.data();
    r.text = render_text_report(data);
    r.json = report_to_json(data);
    if (std::getenv("SHOW_REPORT")) std::cout << r.text;
    return r;
}

}  // namespace stacksage::testing
