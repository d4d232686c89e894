// Node groups (analysis/node_groups.hpp) on hand-written analysis results:
// the key, the order, the group's sentences and figures.
#include <gtest/gtest.h>

#include "analysis/analyzer.hpp"
#include "analysis/node_groups.hpp"
#include "analysis/node_load.hpp"

using namespace stacksage;

namespace {

NodeSummary node(const std::string& host) {
    NodeSummary n;
    n.host = host;
    n.cores_available = n.cpus_available = n.cpus_total = 4;
    n.available = *Cpuset::parse_list("0-3");
    n.topology_source = TopologySource::Hwloc;
    return n;
}

Finding idle(const std::string& host, const char* cpus, int threads) {
    Finding f;
    f.code = FindingCode::IdleResources;
    f.severity = Severity::Warning;
    f.check = "resource-centric";
    f.node = host;
    f.resources = *Cpuset::parse_list(cpus);
    f.message = std::string("Cores [") + cpus + "] may stay idle during execution (underloaded resources)";
    f.detail =
        "no active thread of the " + std::to_string(threads) + " threads on " + host + " (not a10) may run there";
    f.suggestion = "Give the processes of " + host + " more threads";
    f.figures = {{"threads", threads}, {"idle_cores", 3}};
    return f;
}

NodeLoad load(std::int64_t over_ms, std::int64_t from_ms) {
    NodeLoad l;
    l.run_start_ns = 0;
    l.run_end_ns = 10'000'000'000;
    l.over_demanded_ns = over_ms * 1'000'000;
    l.first_over_demand_ns = from_ms * 1'000'000;
    l.last_over_demand_ns = 10'000'000'000;
    return l;
}

}  // namespace

TEST(GroupNodes, AlikeNodesAreOneGroupTheOddOneFirstAndTheirFiguresRanges) {
    AnalysisResult a;
    for (const char* h : {"a1", "a2", "a3", "a4"}) a.nodes.push_back(node(h));
    a.findings = {idle("a1", "1-3", 3), idle("a2", "1-3", 5), idle("a3", "2-3", 3)};  // a4: none
    const std::vector<NodeGroup> groups = group_nodes(a);
    ASSERT_EQ(groups.size(), 3u);
    // Warnings first, the smaller group first; the node without findings last.
    EXPECT_EQ(groups[0].hosts, "a3");
    EXPECT_EQ(groups[1].hosts, "a[1-2]");
    EXPECT_EQ(groups[2].hosts, "a4");
    EXPECT_FALSE(groups[2].worst_severity.has_value());
    EXPECT_EQ(groups[1].nodes, (std::vector<std::size_t>{0, 1}));
    ASSERT_EQ(groups[1].findings.size(), 1u);
    const GroupFinding& g = groups[1].findings[0];
    EXPECT_EQ(g.findings, (std::vector<std::size_t>{0, 1}));
    EXPECT_EQ(g.message, "Cores [1-3] may stay idle during execution (underloaded resources)");
    // Each node's own name becomes the group's hosts (a whole word only: a10
    // is another host), a figure that differs its range.
    EXPECT_EQ(g.detail, "no active thread of the 3\u20135 threads on a[1-2] (not a10) may run there");
    EXPECT_EQ(g.suggestion, "Give the processes of a[1-2] more threads");
    ASSERT_EQ(g.figures.size(), 2u);
    EXPECT_EQ(g.figures[0].name, "threads");
    EXPECT_EQ(g.figures[0].min, 3);
    EXPECT_EQ(g.figures[0].max, 5);
    EXPECT_EQ(g.figures[1].min, 3);
    EXPECT_EQ(g.figures[1].max, 3);
    // A group of one keeps its finding's text.
    EXPECT_EQ(groups[0].findings[0].detail, a.findings[2].detail);
}

TEST(GroupNodes, ShapesAndAdviceThatDifferAreOtherGroups) {
    AnalysisResult a;
    for (const char* h : {"n1", "n2", "n3"}) a.nodes.push_back(node(h));
    a.nodes[2].cores_available = 8;  // another shape
    a.findings = {idle("n1", "1-3", 3), idle("n2", "1-3", 3), idle("n3", "1-3", 3)};
    a.findings[1].suggestion = "Give the processes of n2 fewer threads";
    EXPECT_EQ(group_nodes(a).size(), 3u);
    a.findings[1].suggestion = "Give the processes of n2 more threads";
    EXPECT_EQ(group_nodes(a).size(), 2u);
}

TEST(GroupNodes, SentencesThatDifferInWordsKeepTheFirstMembersAndSaySo) {
    AnalysisResult a;
    for (const char* h : {"n1", "n2"}) a.nodes.push_back(node(h));
    a.findings = {idle("n1", "1-3", 3), idle("n2", "1-3", 3)};
    a.findings[1].detail = "all threads on n2 waited";
    const std::vector<NodeGroup> groups = group_nodes(a);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].findings[0].detail, a.findings[0].detail + " (figures of n1)");
}

TEST(GroupNodes, OverDemandOfSeveralNodesAsOnePhrase) {
    const NodeLoad whole = load(9'998, 1), most = load(9'700, 300), half = load(5'000, 5'000);
    EXPECT_EQ(describe_over_demand_range({&whole}), describe_over_demand(whole));
    EXPECT_EQ(describe_over_demand_range({&whole, &whole}), "the whole run (10.0 s)");
    EXPECT_EQ(describe_over_demand_range({&whole, &most}),
              "97\u2013100 % of the run (9.70\u201310.0 s of 10.0 s, from 1 ms\u20130.30 s to 10.0 s)");
    EXPECT_EQ(describe_over_demand_range({&half, &most}),
              "50\u201397 % of the run (5.00\u20139.70 s of 10.0 s, from 0.30\u20135.00 s to 10.0 s)");
}

// Under srun every node names its own rank ("Rank 17 was bound by srun"):
// the same advice for other ranks is one group, its ranks given as a range
// ("Ranks 0–1 were bound");
// other thread counts stay apart.
TEST(GroupNodes, NodesWhoseAdviceDiffersOnlyInTheirRanksAreOneGroup) {
    AnalysisResult a;
    for (const char* h : {"n1", "n2", "n3"}) a.nodes.push_back(node(h));
    for (int r = 0; r < 3; ++r) {
        Finding f = idle(a.nodes[r].host, "1-3", 1);
        f.suggestion = "Rank " + std::to_string(r) + " was bound by srun to one core: its " +
                       std::to_string(r == 2 ? 4 : 2) + " threads shared it";
        a.findings.push_back(f);
    }
    const std::vector<NodeGroup> groups = group_nodes(a);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].hosts, "n3");  // 4 threads: other advice
    EXPECT_EQ(groups[1].hosts, "n[1-2]");
    ASSERT_EQ(groups[1].findings.size(), 1u);
    EXPECT_EQ(groups[1].findings[0].suggestion, "Ranks 0\u20131 were bound by srun to one core: its 2 threads shared it");
}
