// The one serialiser of findings and node summaries (reports/analysis_json):
// the JSON report's shape and the HTML page's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "reports/analysis_json.hpp"

using namespace stacksage;
using json = nlohmann::json;

namespace {

Finding sample_finding(std::string node) {
    Finding f;
    f.code = FindingCode::IdleResources;
    f.severity = Severity::Warning;
    f.check = "resource-centric";
    f.node = std::move(node);
    f.resources = Cpuset::parse_list("1-3").value();
    f.flows.push_back({"n01", -1, 42, 43, "application"});
    f.flow_count = 5;
    f.message = "Cores [1-3] may stay idle";
    f.detail = "";
    f.suggestion = "use them";
    f.remedy.threads_per_process = 4;
    f.remedy.env.push_back({"OMP_NUM_THREADS", "4"});
    f.figures = {{"cores", 3}};
    return f;
}

}  // namespace

TEST(AnalysisJson, FindingInTheReportShapeHasEveryField) {
    const json j = finding_to_json(sample_finding("n01"));
    EXPECT_EQ(j["code"], "idle-resources");
    EXPECT_EQ(j["severity"], "warning");
    EXPECT_EQ(j["check"], "resource-centric");
    EXPECT_EQ(j["node"], "n01");
    EXPECT_EQ(j["resources"], "1-3");
    EXPECT_EQ(j["flow_count"], 5);
    ASSERT_EQ(j["flows"].size(), 1u);
    EXPECT_TRUE(j["flows"][0]["rank"].is_null());
    EXPECT_EQ(j["flows"][0]["tid"], 43);
    EXPECT_EQ(j["remedy"]["threads_per_process"], 4);
    EXPECT_TRUE(j["remedy"]["processes_per_node"].is_null());
    EXPECT_EQ(j["remedy"]["env"]["OMP_NUM_THREADS"], "4");
    EXPECT_EQ(j["figures"]["cores"], 3);
    EXPECT_TRUE(finding_to_json(sample_finding(""))["node"].is_null());
    Finding plain = sample_finding("n01");
    plain.remedy = {};
    EXPECT_TRUE(finding_to_json(plain)["remedy"].is_null());
}

TEST(AnalysisJson, FindingInThePageShapeLeavesOutRemedyAndFigures) {
    const json j = finding_to_json(sample_finding(""), FindingJsonShape::Page);
    EXPECT_EQ(j["node"], "");
    EXPECT_FALSE(j.contains("remedy"));
    EXPECT_FALSE(j.contains("figures"));
    const json report = finding_to_json(sample_finding(""));
    for (const char* key : {"code", "severity", "check", "resources", "message", "detail", "suggestion", "flows", "flow_count"})
        EXPECT_EQ(j[key], report[key]) << key;
}

TEST(AnalysisJson, NodeSummaryFigures) {
    NodeSummary n;
    n.host = "n01";
    n.cores_available = 4;
    n.cpus_available = 8;
    n.cpus_total = 16;
    n.available = Cpuset::parse_list("0-7").value();
    n.job_restricted = true;
    n.smt = true;
    n.topology_source = TopologySource::Hwloc;
    n.threads = 9;
    n.service_threads = 2;
    n.processes = {0, 1};
    const json j = node_summary_to_json(n);
    EXPECT_EQ(j, json::parse(R"({"host":"n01","cores_available":4,"cpus_available":8,"cpus_total":16,"available":"0-7",
        "job_restricted":true,"smt":true,"launch_host":false,"topology":"hwloc","cpu_quota":null,"threads":9,"service_threads":2})"));
    n.cpu_quota = 0.5;  // a cgroup quota below the available CPUs
    EXPECT_EQ(node_summary_to_json(n)["cpu_quota"], 0.5);
}
