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

// A run analysed and rendered as the text and the JSON report.
struct ReportedRun : AnalysedRun {
    std::string text;
    nlohmann::json json;
};

// As analyse_run, then both reports; SHOW_REPORT=1 prints the text.
inline ReportedRun report_run(const std::string& directory) {
    ReportedRun out{analyse_run(directory), {}, {}};
    const ReportData data = out.data();
    out.text = render_text_report(data);
    out.json = report_to_json(data);
    if (std::getenv("SHOW_REPORT")) std::cout << out.text;
    return out;
}

}  // namespace stacksage::testing
