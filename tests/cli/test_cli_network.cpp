// `stacksage report --network` and `stacksage topo --network` as a user runs
// them: a run whose hosts are nodes of the real plafrim cluster, each with
// its real hwloc topology (so that the join is by the GUIDs the topology
// names), against plafrim's real fabric dump; text, JSON, HTML, GraphML.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "tests/support/synthetic_run.hpp"

namespace {

struct Run {
    int exit_code;
    std::string output;
};

Run run(const std::string& args) {
    std::string cmd = std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    std::string out;
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

const std::string kPlafrim = std::string(STACKSAGE_TEST_DATA_DIR) + "/network/hwloc-netloc-plafrim";

// mirage001-002 hang from one Voltaire switch, fourmi010-011 from another,
// bonobo020 from a third: 5 nodes on 3 leaf switches where one holds 27.
const std::vector<std::string> kHosts = {"mirage001", "mirage002", "fourmi010", "fourmi011", "bonobo020"};

void write_run(const std::filesystem::path& dir) {
    stacksage::testing::SyntheticRun r(dir);
    r.write_run_json(R"(["mpirun","-np","5","./app"])");
    std::int64_t rank = 0;
    for (const std::string& h : kHosts) {
        r.copy_topology(h, kPlafrim + "/hwloc/" + h + ".xml");
        auto p = stacksage::testing::busy_process(h, 1000 + rank, rank, 1, "0");
        p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
        r.add_process(p);
        ++rank;
    }
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

TEST(CliNetwork, ReportJoinsTheRunByGuidAndFindsTheSpread) {
    stacksage::testing::TempDir tmp;
    write_run(tmp.path() / "run");
    const std::string dir = (tmp.path() / "run").string();
    auto r = run("report " + dir + " --format json --network " + kPlafrim);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto doc = nlohmann::json::parse(r.output.substr(r.output.find('{')));
    const auto& net = doc.at("network");
    ASSERT_EQ(net.at("joined").size(), kHosts.size()) << net.dump(1);
    for (const auto& j : net.at("joined")) EXPECT_EQ(j.at("method"), "guid") << j.dump();
    EXPECT_TRUE(net.at("unjoined").empty());
    EXPECT_EQ(net.at("leaf_switches").at("used"), 3);
    EXPECT_EQ(net.at("leaf_switches").at("needed"), 1);
    EXPECT_EQ(net.at("hops").at("pairs"), 10);
    EXPECT_GT(net.at("forwarding_tables").get<int>(), 0);
    bool spread = false;
    for (const auto& f : doc.at("findings"))
        if (f.at("code") == "network-spread") {
            spread = true;
            EXPECT_EQ(f.at("severity"), "warning");
            EXPECT_NE(f.dump().find("--switches=1"), std::string::npos) << f.dump();
        }
    EXPECT_TRUE(spread);

    auto text = run("report " + dir + " --network " + kPlafrim);
    ASSERT_EQ(text.exit_code, 0) << text.output;
    EXPECT_NE(text.output.find("Network ("), std::string::npos) << text.output;
    EXPECT_NE(text.output.find("leaf switches: 3 used, 1 needed"), std::string::npos) << text.output;
    EXPECT_NE(text.output.find("sbatch --switches=1"), std::string::npos);

    const std::string html = (tmp.path() / "r.html").string();
    ASSERT_EQ(run("report " + dir + " --network " + kPlafrim + " --html " + html).exit_code, 0);
    const std::string page = slurp(html);
    EXPECT_NE(page.find("id=\"network-section\""), std::string::npos);
    EXPECT_NE(page.find("<svg"), std::string::npos);
    EXPECT_NE(page.find("#d62728"), std::string::npos);  // the job's switches drawn

    auto graphml = run("report " + dir + " --format graphml --network " + kPlafrim);
    ASSERT_EQ(graphml.exit_code, 0);
    EXPECT_NE(graphml.output.find("ib-switch"), std::string::npos);
    EXPECT_NE(graphml.output.find("NetworkLink"), std::string::npos);
    EXPECT_NE(graphml.output.find("mirage001"), std::string::npos);
}

TEST(CliNetwork, MapFileAndUnjoinedNodes) {
    stacksage::testing::TempDir tmp;
    stacksage::testing::SyntheticRun r(tmp.path() / "run");
    r.write_run_json();
    // Host names the fabric does not know, synthetic topologies without adapters.
    for (const std::string h : {"c1", "c2"}) {
        r.add_host(h, "pack:1 core:2 pu:1");
        r.add_process(stacksage::testing::busy_process(h, 100, -1, 1, "0"));
    }
    std::ofstream(tmp.path() / "map.txt") << "0x78e7d1030024a7cd c1   # mirage001's port\n";
    auto out = run("report " + (tmp.path() / "run").string() + " --format json --network " + kPlafrim +
                   " --network-map " + (tmp.path() / "map.txt").string());
    ASSERT_EQ(out.exit_code, 0) << out.output;
    const auto net = nlohmann::json::parse(out.output.substr(out.output.find('{'))).at("network");
    ASSERT_EQ(net.at("joined").size(), 1u);
    EXPECT_EQ(net.at("joined")[0].at("method"), "map-file");
    ASSERT_EQ(net.at("unjoined").size(), 1u);
    EXPECT_EQ(net.at("unjoined")[0].at("host"), "c2");

    std::ofstream(tmp.path() / "bad-map.txt") << "0x1 c1\nnot-a-guid\n";
    auto bad = run("report " + (tmp.path() / "run").string() + " --network " + kPlafrim + " --network-map " +
                   (tmp.path() / "bad-map.txt").string());
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.output.find("bad-map.txt:2:"), std::string::npos) << bad.output;
    std::ofstream(tmp.path() / "bad.txt") << "CA 1 1 0x1 4x QDR - SW 2 3 0x2 ( 'a' - 'b' )\nCA 1 nope\n";
    auto broken = run("report " + (tmp.path() / "run").string() + " --network " + (tmp.path() / "bad.txt").string());
    EXPECT_EQ(broken.exit_code, 2);
    EXPECT_NE(broken.output.find("bad.txt:2:"), std::string::npos) << broken.output;
}

TEST(CliNetwork, TopoPrintsTheFabricFolded) {
    auto r = run("topo --network " + kPlafrim);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("9 switches in 2 levels, 125 adapters, 201 cables"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("level 1: 7, level 2: 2"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Voltaire 4036 # 4036-8C9E (0x0008f10500108c9e): 27 hosts"), std::string::npos) << r.output;
    auto g = run("topo --network " + kPlafrim + " --format graphml");
    ASSERT_EQ(g.exit_code, 0);
    EXPECT_NE(g.output.find("<graphml"), std::string::npos);
    auto missing = run("topo --network /nonexistent/ib.txt");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.output.find("/nonexistent/ib.txt"), std::string::npos);
}

TEST(CliNetwork, CheckFailsOnTheSpreadAsTheReportShowsIt) {
    stacksage::testing::TempDir tmp;
    write_run(tmp.path() / "run");
    const std::string dir = (tmp.path() / "run").string();
    // Without the fabric nothing is known of the network: the nodes' own
    // warnings only (one busy thread on each: idle cores).
    auto plain = run("check " + dir);
    EXPECT_EQ(plain.exit_code, 1) << plain.output;
    EXPECT_NE(plain.output.find("0 error(s), 5 warning(s)"), std::string::npos) << plain.output;
    EXPECT_EQ(plain.output.find("warning: run: "), std::string::npos) << plain.output;
    // With it, the 5 nodes on 3 leaf switches where 1 holds them are one more.
    auto spread = run("check " + dir + " --network " + kPlafrim);
    EXPECT_EQ(spread.exit_code, 1) << spread.output;
    EXPECT_NE(spread.output.find("0 error(s), 6 warning(s)"), std::string::npos) << spread.output;
    const auto line = spread.output.find("warning: run: ");
    ASSERT_NE(line, std::string::npos) << spread.output;
    EXPECT_NE(spread.output.substr(line, spread.output.find('\n', line) - line).find("3 leaf switches"), std::string::npos)
        << spread.output;
    EXPECT_EQ(run("check " + dir + " --network " + kPlafrim + " --fail-on error").exit_code, 0);
    // A fabric that cannot be read: the check cannot vouch for the run.
    std::ofstream(tmp.path() / "bad.txt") << "Switch 36 \"S-0002\"\nnonsense\n";
    auto broken = run("check " + dir + " --network " + (tmp.path() / "bad.txt").string());
    EXPECT_EQ(broken.exit_code, 2) << broken.output;
    EXPECT_NE(broken.output.find("bad.txt:"), std::string::npos) << broken.output;
}
