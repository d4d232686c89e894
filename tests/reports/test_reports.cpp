// The terminal and JSON reports, and `stacksage report` / `stacksage check`
// as a user runs them.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

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

// Four 4-core nodes, one single-thread rank bound to each core.
void write_well_placed_cluster(const TempDir& dir, int nodes) {
    SyntheticRun run(dir.path());
    // As many ranks as the nodes hold: a command that asks for more is an
    // incomplete recording (tests/pipeline/test_completeness.cpp).
    run.write_run_json(fmt::format(R"(["mpirun","-np","{}","--bind-to","core","./app"])", 4 * nodes));
    for (int n = 0; n < nodes; ++n) {
        const std::string host = fmt::format("n{:02d}", n + 1);
        run.add_host(host, "pack:1 core:4 pu:1");
        for (int c = 0; c < 4; ++c) {
            SyntheticProcess p = busy_process(host, 1000 + n * 10 + c, n * 4 + c, 1, std::to_string(c));
            p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(n * 4 + c);
            run.add_process(p);
        }
    }
}

using CliRun = stacksage::testing::Shell;

CliRun cli(const std::string& args) {
    return stacksage::testing::shell(std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage " + args);
}

}  // namespace

TEST(TextReport, FoldsIdenticalRanksAndNodes) {
    TempDir dir;
    write_well_placed_cluster(dir, 4);
    const Rendered r = analyse(dir);
    const std::string text = render_text_report(r.data());
    EXPECT_NE(
        text.find("+ Nodes n[01-04] (4 nodes, ranks 0-15): 4 cores available, 4 processes created.\n"
                  "      On n01, the first of them:\n"
                  "      Ranks 0-3 (4 processes) each created no threads (only the main thread) on 1 cpu each: none "
                  "shared: rank 0 on cpu 0; rank 1 on cpu 1; rank 2 on cpu 2; rank 3 on cpu 3\n"
                  "Analysis conclusion: 0 warning(s)\n"),
        std::string::npos)
        << text;
    EXPECT_EQ(text.find("\033["), std::string::npos);  // no colour unless asked
}

// 8 ranks bound round-robin to the 2 cores, 2 threads each: the folded line
// says which ranks share which core; a second node placed the same way under
// other rank numbers is in the first one's group, its one warning shown once.
TEST(TextReport, FoldedRanksOnDifferentCpusSayWhichRankGotWhichCpu) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","16","--bind-to","core","./app"])");
    for (int n = 0; n < 2; ++n) {
        const std::string host = fmt::format("n{:02d}", n + 1);
        run.add_host(host, "pack:1 core:2 pu:1");
        for (int r = 0; r < 8; ++r)
            run.add_process(busy_process(host, 2000 + n * 100 + r, n * 8 + r, 2, std::to_string(r % 2)));
    }
    const Rendered rendered = analyse(dir);
    const std::string text = render_text_report(rendered.data());
    EXPECT_NE(text.find("      Ranks 0-7 (8 processes) each created 1 thread (2 with the main thread) on 1 cpu each: "
                        "ranks 0,2,4,6 on cpu 0; ranks 1,3,5,7 on cpu 1"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("together"), std::string::npos) << "no union that hides who shares a core\n" << text;
    EXPECT_NE(text.find("+ Nodes n[01-02] (2 nodes, ranks 0-15): 2 cores available, 8 processes created.\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("## WARNING ##"), text.rfind("## WARNING ##")) << text;
}

// Identical placements still fold into one cpuset; many processes each on a
// CPU of its own are said to share none rather than listed.
TEST(TextReport, IdenticalPlacementsFoldAndManyPrivateOnesAreSummed) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:16 pu:1");
    for (int r = 0; r < 4; ++r) run.add_process(busy_process("n01", 3000 + r, r, 1, "0-1"));
    for (int r = 4; r < 16; ++r) run.add_process(busy_process("n01", 3000 + r, r, 2, std::to_string(r)));
    const Rendered rendered = analyse(dir);
    const std::string text = render_text_report(rendered.data());
    EXPECT_NE(text.find("Ranks 0-3 (4 processes) each created no threads (only the main thread) on cpu(s) [0-1]\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Ranks 4-15 (12 processes) each created 1 thread (2 with the main thread) on 1 cpu each: none "
                        "shared, together cpu(s) [4-15]"),
              std::string::npos)
        << text;
}

TEST(TextReport, DoesNotFoldNodesThatDiffer) {
    TempDir dir;
    write_well_placed_cluster(dir, 3);
    SyntheticRun run(dir.path());
    run.add_host("n04", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n04", 5000, 12, 1, "0"));
    const Rendered r = analyse(dir);
    const std::string text = render_text_report(r.data());
    // The node with a warning first, then the group of the three alike.
    const std::size_t odd = text.find("+ Node n04: 4 cores available, 1 process created.\n");
    const std::size_t alike =
        text.find("+ Nodes n[01-03] (3 nodes, ranks 0-11): 4 cores available, 4 processes created.\n");
    EXPECT_NE(odd, std::string::npos) << text;
    EXPECT_NE(alike, std::string::npos) << text;
    EXPECT_LT(odd, alike) << text;
    EXPECT_NE(text.find("Cores [1-3] may stay idle"), std::string::npos);
}

TEST(TextReport, ColoursOnlyWhenAsked) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    run.add_process(busy_process("n01", 100, 0, 1, "0"));
    const Rendered r = analyse(dir);
    TextReportOptions o;
    o.color = true;
    EXPECT_NE(render_text_report(r.data(), o).find("\033[1;33m## WARNING ##\033[0m"), std::string::npos);
}

TEST(JsonReport, HasTheVersionedSchema) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","2","./app"])");
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 100, 0, 4, "0-1"));
    run.add_process(busy_process("n01", 200, 1, 4, "0-1"));
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0002.pid-300.jsonl", "not json\nat all\n");
    const Rendered r = analyse(dir);
    const nlohmann::json j = nlohmann::json::parse(report_to_json(r.data()).dump());
    EXPECT_EQ(j["schema"], "stacksage-report");
    EXPECT_EQ(j["version"], kReportJsonVersion);
    EXPECT_EQ(j["run"]["command"], "mpirun -np 2 ./app");
    EXPECT_EQ(j["run"]["launcher"]["kind"], "Open MPI");
    EXPECT_EQ(j["summary"]["processes"], 2);
    EXPECT_EQ(j["summary"]["threads"], 8);
    EXPECT_EQ(j["summary"]["logs_skipped"], 1);
    ASSERT_EQ(j["nodes"].size(), 1u);
    const auto& node = j["nodes"][0];
    EXPECT_EQ(node["host"], "n01");
    EXPECT_EQ(node["cores_available"], 4);
    EXPECT_EQ(node["processes"][1]["rank"], 1);
    EXPECT_EQ(node["processes"][1]["cpus"], "0-1");
    EXPECT_EQ(node["processes"][1]["runtimes"][1]["name"], "GNU OpenMP");
    // Each flow's CPU time, the main thread first.
    ASSERT_EQ(node["processes"][1]["flows"].size(), 4u);
    EXPECT_EQ(node["processes"][1]["flows"][0]["tid"], 200);
    for (const auto& f : node["processes"][1]["flows"]) EXPECT_TRUE(f["cpu_us"].is_number()) << f.dump();
    bool overload = false;
    for (const auto& f : j["findings"]) {
        for (const char* field : {"code", "severity", "check", "node", "resources", "message", "detail", "suggestion",
                                  "flow_count", "flows", "figures"})
            EXPECT_TRUE(f.contains(field)) << field;
        if (f["code"] == "overloaded-resources") {
            overload = true;
            EXPECT_EQ(f["severity"], "warning");
            EXPECT_EQ(f["resources"], "0-1");
            EXPECT_EQ(f["flow_count"], 8);
            EXPECT_EQ(f["flows"][0]["host"], "n01");
            EXPECT_EQ(f["flows"][0]["rank"], 0);
            EXPECT_TRUE(f["flows"][0].contains("tid"));
            EXPECT_NE(f["suggestion"].get<std::string>().find("mpirun --map-by ppr:2:node:PE=2 --bind-to core"),
                      std::string::npos)
                << f["suggestion"];
        }
    }
    EXPECT_TRUE(overload);
    bool skipped = false;
    for (const auto& n : j["input"]["notes"])
        if (n["file"] == "n01/rank-0002.pid-300.jsonl" && n["level"] == "error") skipped = true;
    EXPECT_TRUE(skipped);
}

TEST(Cli, ReportAndCheckExitCodes) {
    TempDir good;
    write_well_placed_cluster(good, 2);
    TempDir bad;
    SyntheticRun run(bad.path());
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 100, 0, 1, "0"));

    CliRun r = cli("report " + good.str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("+ Nodes n[01-02] (2 nodes, ranks 0-7): 4 cores available"), std::string::npos) << r.output;
    r = cli("report " + bad.str() + " --format json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(nlohmann::json::parse(r.output)["summary"]["warnings"], 1);

    EXPECT_EQ(cli("check " + good.str() + " --fail-on warning").exit_code, 0);
    r = cli("check " + bad.str() + " --fail-on warning");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("warning: n01: Cores [1-3] may stay idle"), std::string::npos) << r.output;
    EXPECT_EQ(cli("check " + bad.str() + " --fail-on error").exit_code, 0);
    // mpirun -np 16, 8 ranks recorded: an incomplete recording is an error.
    TempDir incomplete;
    write_well_placed_cluster(incomplete, 2);
    SyntheticRun(incomplete.path()).write_run_json(R"(["mpirun","-np","16","--bind-to","core","./app"])");
    r = cli("check " + incomplete.str() + " --fail-on error");
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("error: run: The recording is incomplete: 8 of 16 ranks (ranks 8-15) left no log"),
              std::string::npos)
        << r.output;
    r = cli("check " + bad.str() + "/missing --fail-on warning");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("no such directory"), std::string::npos) << r.output;
    EXPECT_EQ(cli("check " + bad.str() + " --fail-on sometimes").exit_code, 2);
    EXPECT_EQ(cli("report " + good.str() + " --format xml").exit_code, 2);
}

// Names, paths and commands come from the recorded processes: a program
// named with terminal escapes must not drive the reader's terminal.
// Control characters are shown as \xNN (reports/terminal_text.hpp).
namespace {
void write_run_with_control_characters(const TempDir& dir) {
    SyntheticRun run(dir.path());
    run.write_run_json("[\"./app\\u001b[2J\", \"--title\\r\\u0007\"]");
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess p = busy_process("n01", 1000, -1, 3, "0-3");
    p.exe = "/opt/app/bin/evil\x1b]0;owned\x07" "app";
    run.add_process(p);
    // An event log that does not parse, under a name with an escape: an input note.
    SyntheticRun::write_file(dir.path() / "n01" / "pid-77\x1b[31m.jsonl", "not json\n");
}

bool has_raw_control_characters(const std::string& text, bool colour_codes_allowed) {
    for (std::size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c == '\n') continue;
        if (c == 0x1b && colour_codes_allowed && i + 1 < text.size() && text[i + 1] == '[') {
            // Only the report's own SGR colour codes: ESC [ digits ; m
            std::size_t j = i + 2;
            while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == ';')) ++j;
            if (j < text.size() && text[j] == 'm' && j > i + 2) continue;
            return true;
        }
        if (c < 0x20 || c == 0x7f) return true;
    }
    return false;
}
}  // namespace

TEST(TextReport, ShowsControlCharactersFromTheRunAsEscapes) {
    TempDir dir;
    write_run_with_control_characters(dir);
    const Rendered r = analyse(dir);
    for (bool colour : {false, true}) {
        TextReportOptions o;
        o.color = colour;
        const std::string text = render_text_report(r.data(), o);
        EXPECT_FALSE(has_raw_control_characters(text, colour)) << text;
        EXPECT_EQ(text.find("\x1b]0;"), std::string::npos);
        EXPECT_EQ(text.find("\x1b[2J"), std::string::npos);
        EXPECT_NE(text.find("Run: ./app\\x1b[2J --title\\x0d\\x07"), std::string::npos) << text;
        EXPECT_NE(text.find("evil\\x1b]0;owned\\x07app"), std::string::npos) << text;
        EXPECT_NE(text.find("pid-77\\x1b[31m.jsonl"), std::string::npos) << text;
    }
}

TEST(Cli, CheckAndReportShowControlCharactersAsEscapes) {
    TempDir dir;
    write_run_with_control_characters(dir);
    const CliRun report = cli("report " + dir.str() + " --color always");
    EXPECT_FALSE(has_raw_control_characters(report.output, true)) << report.output;
    EXPECT_NE(report.output.find("evil\\x1b]0;owned\\x07app"), std::string::npos) << report.output;
    const CliRun check = cli("check " + dir.str());
    EXPECT_FALSE(has_raw_control_characters(check.output, false)) << check.output;
    EXPECT_NE(check.output.find("pid-77\\x1b[31m.jsonl"), std::string::npos) << check.output;
}
