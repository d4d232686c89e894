// Reports at scale: nodes with the same findings are one group
// (analysis/node_groups.hpp), shown once with their hosts in hostlist
// notation and their figures as ranges, in the terminal report, in `check`
// and in the JSON report's node_groups.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"
#include "parsers/run_loader.hpp"
#include "reports/json_report.hpp"
#include "reports/text_report.hpp"
#include "tests/support/analysed_run.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

using Rendered = AnalysedRun;

Rendered analyse(const TempDir& dir) { return analyse_run(dir.str()); }

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

// Bound ranks of 2 threads on 2-core nodes: every core over-subscribed, on
// node n from (n-1) % 5 x 100 ms on: the whole run on n01, 97 % of it on n04.
SyntheticCluster oversubscribed_alike(long nodes) {
    SyntheticCluster c;
    c.nodes = nodes;
    c.ranks = 2;
    c.threads = 2;
    c.cores = 2;
    c.bound = true;
    c.stagger_ns = 100'000'000;
    return c;
}

}  // namespace

// The issue's case: two nodes over-subscribed alike, "for the whole run" on
// one and "for 97 % of the run" on the other, are one warning.
TEST(NodeGroups, NodesOverSubscribedAlikeAreOneGroupWithTheirFiguresAsRanges) {
    TempDir dir;
    SyntheticCluster c = oversubscribed_alike(4);
    c.host_digits = 2;
    c.nodes = 4;
    write_synthetic_cluster(dir.path(), c);
    std::filesystem::remove_all(dir.path() / "n02");  // n01 (whole run) and n04 (97 %) left, and n03
    std::filesystem::remove_all(dir.path() / "n03");
    const Rendered r = analyse(dir);
    const AnalysisResult& a = r.analysis;
    ASSERT_EQ(a.nodes.size(), 2u);
    ASSERT_EQ(a.node_groups.size(), 1u);
    const NodeGroup& g = a.node_groups.front();
    EXPECT_EQ(g.hosts, "n[01,04]");
    ASSERT_FALSE(g.findings.empty());
    const GroupFinding& over = g.findings.front();
    EXPECT_EQ(over.code, FindingCode::OverloadedResources);
    EXPECT_EQ(over.findings.size(), 2u);
    EXPECT_NE(
        over.message.find("for 97\u2013100 % of the run (9.70\u201310.0 s of 10.0 s, from 1 ms\u20130.30 s to 10.0 s)"),
        std::string::npos)
        << over.message;
    const auto ms = std::find_if(over.figures.begin(), over.figures.end(),
                                 [](const FigureRange& f) { return f.name == "over_demanded_ms"; });
    ASSERT_NE(ms, over.figures.end());
    EXPECT_EQ(ms->min, 9698);
    EXPECT_EQ(ms->max, 9998);

    const std::string text = render_text_report(r.data());
    EXPECT_NE(text.find("+ Nodes n[01,04] (2 nodes, ranks 0-1,6-7): 2 cores available, 2 processes created.\n"
                        "      On n01, the first of them:\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(count_of(text, "## WARNING ##"), g.findings.size()) << text;
    EXPECT_NE(text.find("97\u2013100 % of the run"), std::string::npos) << text;
    EXPECT_EQ(text.find("the whole run"), std::string::npos) << text;

    const nlohmann::json j = report_to_json(r.data());
    ASSERT_EQ(j["node_groups"].size(), 1u);
    EXPECT_EQ(j["node_groups"][0]["hosts"], "n[01,04]");
    EXPECT_EQ(j["node_groups"][0]["nodes"], nlohmann::json::array({"n01", "n04"}));
    EXPECT_EQ(j["node_groups"][0]["worst"], "warning");
    const nlohmann::json& jf = j["node_groups"][0]["findings"][0];
    EXPECT_EQ(jf["code"], "overloaded-resources");
    EXPECT_EQ(jf["figures"]["over_demanded_ms"]["min"], 9698);
    EXPECT_EQ(jf["figures"]["over_demanded_ms"]["max"], 9998);
    // Every node's finding is still there, each with its own figures.
    ASSERT_EQ(jf["findings"].size(), 2u);
    EXPECT_EQ(j["findings"][jf["findings"][0].get<std::size_t>()]["node"], "n01");
    EXPECT_EQ(j["findings"][jf["findings"][1].get<std::size_t>()]["node"], "n04");
    EXPECT_NE(j["findings"][jf["findings"][1].get<std::size_t>()]["message"].get<std::string>().find("97 % of the run"),
              std::string::npos);
}

// A different set of CPUs is another group: its advice would not fit.
TEST(NodeGroups, NodesWhoseFindingsConcernOtherCpusAreNotGrouped) {
    TempDir dir;
    SyntheticCluster c = oversubscribed_alike(3);
    c.host_digits = 2;
    c.stagger_ns = 0;
    c.idle_nodes = {2};
    write_synthetic_cluster(dir.path(), c);
    const Rendered r = analyse(dir);
    ASSERT_EQ(r.analysis.node_groups.size(), 2u);
    EXPECT_EQ(r.analysis.node_groups[0].hosts, "n02");  // the odd one first
    EXPECT_EQ(r.analysis.node_groups[1].hosts, "n[01,03]");
    const std::string text = render_text_report(r.data());
    EXPECT_LT(text.find("+ Node n02: 2 cores available"), text.find("+ Nodes n[01,03] (2 nodes")) << text;
}

// Twice the threads per rank on n02: the same CPUs over-subscribed and the
// same remedy as data, but advice that differs ("OMP_NUM_THREADS was 4",
// not 2): another group, or its suggestion would read "2–4".
TEST(NodeGroups, NodesThatNeedOtherAdviceAreNotGrouped) {
    TempDir dir;
    SyntheticCluster c = oversubscribed_alike(3);
    c.host_digits = 2;
    c.overloaded_nodes = {2};
    write_synthetic_cluster(dir.path(), c);
    const Rendered r = analyse(dir);
    ASSERT_EQ(r.analysis.node_groups.size(), 2u);
    EXPECT_EQ(r.analysis.node_groups[0].hosts, "n02");
    EXPECT_EQ(r.analysis.node_groups[1].hosts, "n[01,03]");
    for (const NodeGroup& g : r.analysis.node_groups)
        for (const GroupFinding& f : g.findings)
            EXPECT_EQ(f.suggestion.find("\u2013"), std::string::npos) << g.hosts << ": " << f.suggestion;
}

// 1,000 nodes over-subscribed alike, and one that differs: a report that
// fits a screen, the odd node first, as its own group; `check` says it in
// a few lines too.
TEST(NodeGroups, AThousandAlikeNodesFitSixtyLinesAndTheOddOneLeads) {
    TempDir dir;
    SyntheticCluster c = oversubscribed_alike(1000);
    c.idle_nodes = {500};
    auto t0 = std::chrono::steady_clock::now();
    write_synthetic_cluster(dir.path(), c);
    auto t1 = std::chrono::steady_clock::now();
    const Rendered r = analyse(dir);
    auto t2 = std::chrono::steady_clock::now();
    const std::string text = render_text_report(r.data());
    auto t3 = std::chrono::steady_clock::now();
    const std::size_t groups = group_nodes(r.analysis).size();  // the grouping alone, timed
    auto t4 = std::chrono::steady_clock::now();
    auto secs = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
    std::printf("1,000 nodes: write %.2f s, load+analyse %.2f s (grouping %.3f s, %zu groups), render %.3f s\n",
                secs(t0, t1), secs(t1, t2), secs(t3, t4), groups, secs(t2, t3));

    const AnalysisResult& a = r.analysis;
    ASSERT_EQ(a.nodes.size(), 1000u);
    ASSERT_EQ(a.node_groups.size(), 2u);
    EXPECT_EQ(a.node_groups[0].hosts, "n0500");
    EXPECT_EQ(a.node_groups[1].hosts, "n[0001-0499,0501-1000]");
    EXPECT_EQ(a.node_groups[1].nodes.size(), 999u);
    EXPECT_LE(count_of(text, "\n"), 60u) << text;
    const std::size_t odd = text.find("+ Node n0500: 2 cores available");
    const std::size_t rest = text.find("+ Nodes n[0001-0499,0501-1000] (999 nodes, ranks 0-997,1000-1999)");
    ASSERT_NE(odd, std::string::npos) << text;
    ASSERT_NE(rest, std::string::npos) << text;
    EXPECT_LT(odd, rest);
    EXPECT_NE(text.find("96\u2013100 % of the run"), std::string::npos) << text;
    EXPECT_NE(text.find("Analysis conclusion: 1001 warning(s)"), std::string::npos) << text;

    const Shell check = shell(std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage check " + dir.str());
    EXPECT_EQ(check.exit_code, 1) << check.output;
    EXPECT_LE(count_of(check.output, "\n"), 6u) << check.output;
    EXPECT_NE(check.output.find("warning: n[0001-0499,0501-1000] (999 nodes): Cores [0-1] had more threads"),
              std::string::npos)
        << check.output;
    EXPECT_NE(check.output.find("warning: n0500: Cores [1] may stay idle"), std::string::npos) << check.output;
}
