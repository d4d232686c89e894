// The analysis runs on several threads (AnalysisOptions::threads): the
// per-node loads, the view, the checks and the summaries each into their
// own slot. One run analysed on one thread and on several gives the same
// reports, byte for byte.
#include <gtest/gtest.h>

#include <string>

#include "analysis/analyzer.hpp"
#include "parsers/run_loader.hpp"
#include "reports/json_report.hpp"
#include "reports/json_stream.hpp"
#include "reports/report_data.hpp"
#include "reports/text_report.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

struct Reports {
    std::string json, text;
};

Reports report(const LoadedRun& run, unsigned threads) {
    AnalysisOptions options;
    options.threads = threads;
    options.load_series_rows = false;  // as `stacksage report` runs it
    const AnalysisResult analysis = analyze(run.model, options);
    ReportData data;
    data.analysis = &analysis;
    data.notes = &run.notes;
    data.directory = run.directory;
    data.logs = run.stats.logs;
    Reports r;
    write_report_json(data, string_sink(r.json));
    r.text = render_text_report(data);
    return r;
}

}  // namespace

TEST(ParallelAnalysis, OneThreadAndSeveralGiveTheSameReports) {
    TempDir dir;
    // Nodes unlike each other, so that a node's figures put in another's
    // slot, or findings merged out of order, change the reports: some
    // over-subscribed, one half idle, one whose threads pin themselves, and
    // over-demand that lasts differently long per node.
    SyntheticCluster c;
    c.nodes = 40;
    c.ranks = 4;
    c.threads = 3;
    c.cores = 16;
    c.cores_per_rank = 2;
    c.overloaded_nodes = {3, 17, 18, 31};
    c.idle_nodes = {9};
    c.odd_nodes = {24};
    c.stagger_ns = 100'000'000;
    write_synthetic_cluster(dir.path(), c);
    const Result<LoadedRun> run = load_run(dir.str());
    ASSERT_TRUE(run) << run.error().message;

    const Reports one = report(*run, 1);
    ASSERT_NE(one.text.find("WARNING"), std::string::npos) << "the run has findings to order\n" << one.text;
    ASSERT_NE(one.json.find("\"n0040\""), std::string::npos);
    for (unsigned threads : {2u, 3u, 8u}) {
        const Reports several = report(*run, threads);
        EXPECT_EQ(several.json, one.json) << threads << " threads";
        EXPECT_EQ(several.text, one.text) << threads << " threads";
    }
}
