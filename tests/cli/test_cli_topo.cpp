// `stacksage topo` as a user runs it: output, JSON validity and exit codes.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

struct Run {
    int exit_code;
    std::string output;  // stdout and stderr together
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

const std::string kData = STACKSAGE_TEST_DATA_DIR;

}  // namespace

TEST(CliTopo, PrintsARealTopologyAsATree) {
    auto r = run("topo --input " + kData + "/hwloc-xml/emmett.xml");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Node L#0 P#0 cpuset=0-7 \"emmett\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("Chip(package)"), std::string::npos);
    EXPECT_NE(r.output.find("Thread L#7 P#7 cpuset=7"), std::string::npos);
}

TEST(CliTopo, MaxDepthLimitsTheTree) {
    auto r = run("topo --input " + kData + "/hwloc-xml/emmett.xml --max-depth 1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Node"), std::string::npos);
    EXPECT_EQ(r.output.find("Chip"), std::string::npos) << r.output;
}

TEST(CliTopo, JsonOutputIsTheModelSchema) {
    auto r = run("topo --format json --input " + kData + "/hwloc-xml/Intel-SapphireRapids-2xXeonMax9460.xml");
    ASSERT_EQ(r.exit_code, 0) << r.output.substr(0, 500);
    auto doc = nlohmann::json::parse(r.output, nullptr, false);
    ASSERT_FALSE(doc.is_discarded());
    EXPECT_EQ(doc["format"], "stacksage-model");
    int threads = 0;
    for (const auto& c : doc["components"]) threads += c["type"] == "Thread";
    EXPECT_EQ(threads, 160);
}

TEST(CliTopo, DiscoversThisMachine) {
    auto r = run("topo");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("Thread"), std::string::npos);
}

TEST(CliTopo, BadInputExitsWithTwoAndNamesTheFile) {
    auto r = run("topo --input /nonexistent/machine.xml");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("/nonexistent/machine.xml"), std::string::npos) << r.output;
    r = run("topo --input " + kData);  // a directory
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find(kData), std::string::npos) << r.output;
}

TEST(CliTopo, UsageErrorsExitWithTwo) {
    EXPECT_EQ(run("topo --format yaml").exit_code, 2);
    EXPECT_EQ(run("topo --no-such-option").exit_code, 2);
    EXPECT_EQ(run("").exit_code, 2);
}

TEST(CliTopo, HelpAndVersion) {
    auto r = run("--version");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find("stacksage 0."), std::string::npos);
    r = run("topo --help");
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.output.find("--input"), std::string::npos);
}
