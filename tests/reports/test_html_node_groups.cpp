// The HTML page at scale: one section per node group (analysis/node_groups.hpp),
// drawn once from its representative node, with the group's hosts in
// hostlist notation and how many nodes it stands for; the odd nodes keep
// sections of their own; the page grows with the groups, not the nodes.
// The same page in a real browser: tests/browser/ (ctest label "browser").
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "reports/html_report.hpp"
#include "tests/support/analysed_run.hpp"
#include "tests/support/html_report_runs.hpp"

using namespace stacksage;
using namespace stacksage::testing;
using json = nlohmann::json;

namespace {

struct GroupsPage {
    TempDir dir;
    AnalysedRun run;
    std::string page;
    json data;
    explicit GroupsPage(long nodes) {
        write_html_groups_run(dir.path(), nodes);
        run = analyse_run(dir.str());
        page = render_html_report(run.data(), run.run.model);
        const std::string open = "<script type=\"application/json\" id=\"stacksage-data\">";
        const std::size_t from = page.find(open) + open.size();
        data = json::parse(page.substr(from, page.find("</script>", from) - from));
    }
    const json* section_of(const std::string& hosts) const {
        for (const json& g : data["groups"])
            if (g["hosts"] == hosts) return &g;
        return nullptr;
    }
};

}  // namespace

TEST(HtmlNodeGroups, ManyAlikeNodesAreOneSectionAndTheOddOnesKeepTheirOwn) {
    const GroupsPage p(60);
    const AnalysisResult& a = p.run.analysis;
    const json& groups = p.data["groups"];
    // One section per group of the analysis, in its order (worst first), each
    // drawn from the group's first node, saying how many nodes it stands for.
    ASSERT_EQ(groups.size(), a.node_groups.size());
    std::size_t nodes = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const NodeGroup& group = a.node_groups[g];
        EXPECT_EQ(groups[g]["hosts"], group.hosts);
        EXPECT_EQ(groups[g]["size"], group.nodes.size());
        EXPECT_EQ(groups[g]["node"]["host"], a.nodes[group.representative()].host);
        EXPECT_EQ(groups[g]["findings"].size(), group.findings.size());
        EXPECT_FALSE(groups[g].contains("nodes")) << "no list of the members: the hostlist says them";
        EXPECT_EQ(groups[g]["node"]["pus"].size(), 8u) << "the representative is drawn";
        nodes += groups[g]["size"].get<std::size_t>();
    }
    EXPECT_EQ(nodes, 60u);
    EXPECT_EQ(p.data["summary"]["nodes"], 60);

    // The odd nodes: each with its own findings, and the alike ones as one.
    ASSERT_EQ(groups.size(), 4u) << groups.dump(1).substr(0, 4000);
    const json* idle = p.section_of("n012");
    const json* odd = p.section_of("n021");
    const json* over = p.section_of("n[007,030]");
    const json* rest = p.section_of("n[001-006,008-011,013-020,022-029,031-060]");
    ASSERT_TRUE(idle && odd && over && rest) << groups.dump(1).substr(0, 4000);
    EXPECT_EQ((*rest)["size"], 56);
    EXPECT_EQ((*rest)["node"]["host"], "n001");
    EXPECT_TRUE((*rest)["findings"].empty());
    EXPECT_EQ((*over)["size"], 2);
    EXPECT_EQ((*over)["node"]["host"], "n007");
    std::set<std::string> codes;
    for (const json& f : (*over)["findings"]) codes.insert(f["code"]);
    EXPECT_TRUE(codes.count("overloaded-resources")) << (*over)["findings"].dump(1);
    for (const json& f : (*over)["findings"])
        if (f["code"] == "overloaded-resources")
            EXPECT_NE(f["suggestion"].get<std::string>().find("on the 8 cores of n[007,030]"), std::string::npos)
                << "the group's advice names its hosts: " << f["suggestion"];
    EXPECT_EQ((*idle)["size"], 1);
    EXPECT_FALSE((*idle)["findings"].empty());
    EXPECT_EQ((*odd)["size"], 1);
    EXPECT_FALSE((*odd)["findings"].empty());
    // The over-subscribed group's drawn node shows its over-subscribed CPUs.
    EXPECT_FALSE((*over)["node"]["oversubscribed"].get<std::string>().empty());
    EXPECT_TRUE((*over)["node"].contains("load"));

    // Only the drawn nodes' processes and flows are on the page, each
    // naming its section.
    std::size_t expected_processes = 0, expected_flows = 0;
    for (const NodeGroup& g : a.node_groups)
        for (const ProcessView& proc : a.view.processes)
            if (proc.node == g.representative()) ++expected_processes, expected_flows += proc.flows.size();
    EXPECT_EQ(p.data["processes"].size(), expected_processes);
    EXPECT_EQ(p.data["flows"].size(), expected_flows);
    EXPECT_LT(p.data["processes"].size(), a.view.processes.size());
    for (const json& proc : p.data["processes"]) {
        const std::size_t g = proc["group"];
        ASSERT_LT(g, groups.size());
    }
    EXPECT_EQ(p.data["summary"]["processes"], a.view.processes.size()) << "the header counts the whole run";
    EXPECT_EQ(p.data["summary"]["flows"], a.view.flows.size());
}

// Ten times the nodes, the same groups: the page keeps its size (the
// hostlists and counts differ by a few characters), where a page with a
// section per node grows tenfold.
TEST(HtmlNodeGroups, PageSizeGrowsWithTheGroupsNotTheNodes) {
    const GroupsPage small(60), large(600);
    ASSERT_EQ(small.data["groups"].size(), large.data["groups"].size());
    EXPECT_EQ(large.data["summary"]["nodes"], 600);
    const long grown = static_cast<long>(large.page.size()) - static_cast<long>(small.page.size());
    EXPECT_LT(grown, 200) << small.page.size() << " bytes for 60 nodes, " << large.page.size() << " for 600";
    EXPECT_EQ(large.data["processes"].size(), small.data["processes"].size());
    EXPECT_EQ(large.data["flows"].size(), small.data["flows"].size());
}
