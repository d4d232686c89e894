// Reports written as they are made (reports/json_stream.hpp): the streamed
// JSON report and HTML page are byte for byte what dumping the whole
// document gives, whatever the indentation, nesting and size of the arrays
// (the elements of a large array are made on several threads).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"
#include "reports/html_report.hpp"
#include "reports/html_report_page.hpp"
#include "reports/json_report.hpp"
#include "reports/json_stream.hpp"
#include "tests/support/analysed_run.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
using json = nlohmann::json;

namespace {

// Element i of a test array: nested objects and arrays, empty ones, a
// string with an invalid byte (replaced) and one with markup.
json element(std::size_t i) {
    json e = {{"i", i}, {"name", "n" + std::to_string(i)}, {"empty", json::array()}, {"none", json::object()}};
    e["nested"] = {{"list", {1, 2, {{"deep", i % 3}}}}, {"text", i % 7 == 0 ? "bad\xff</script>" : "ok"}};
    return e;
}

std::string streamed(const json& members, std::size_t count, int indent, const std::string& key = "items") {
    std::string out;
    write_json_object(string_sink(out), members, {{key, {count, element}}}, indent);
    return out;
}

std::string dumped(json members, std::size_t count, int indent, const std::string& key = "items") {
    json items = json::array();
    for (std::size_t i = 0; i < count; ++i) items.push_back(element(i));
    members[key] = std::move(items);
    return members.dump(indent, ' ', false, json::error_handler_t::replace);
}

}  // namespace

TEST(JsonStream, WritesWhatDumpWritesForEveryIndentAndArraySize) {
    const json members = {{"schema", "x"}, {"version", 1}, {"a", {{"b", {1, 2}}}}, {"zz", json::array()}};
    for (int indent : {-1, 0, 1, 2})
        for (std::size_t count : {0u, 1u, 15u, 16u, 17u, 1000u, 5000u})
            EXPECT_EQ(streamed(members, count, indent), dumped(members, count, indent))
                << "indent " << indent << ", " << count << " elements";
    // The streamed key sorts among the others as nlohmann's keys do, first or last.
    EXPECT_EQ(streamed(members, 20, 1, "aa"), dumped(members, 20, 1, "aa"));
    EXPECT_EQ(streamed(members, 20, 1, "~last"), dumped(members, 20, 1, "~last"));
    // An object of streamed members only.
    EXPECT_EQ(streamed(json::object(), 3, 1), dumped(json::object(), 3, 1));
}

TEST(JsonStream, AnElementThatThrowsFailsTheWrite) {
    std::string out;
    const StreamedArray failing{100, [](std::size_t i) -> json {
                                    if (i == 60) throw std::runtime_error("element 60");
                                    return json(i);
                                }};
    EXPECT_THROW(write_json_object(string_sink(out), json::object(), {{"items", failing}}, 1), std::runtime_error);
}

TEST(JsonStream, TheStreamedReportAndPageAreTheWholeDocumentsText) {
    TempDir dir;
    SyntheticCluster c;
    c.nodes = 3;
    c.ranks = 4;
    c.threads = 3;
    c.cores = 4;
    c.bound = true;
    write_synthetic_cluster(dir.path(), c);
    const AnalysedRun r = analyse_run(dir.str());

    std::string report;
    write_report_json(r.data(), string_sink(report));
    EXPECT_EQ(report, report_to_json(r.data()).dump(1, ' ', false, json::error_handler_t::replace) + "\n");

    // The page: the whole data document made safe for its script block,
    // inside the same markup.
    const std::string page = render_html_report(r.data(), r.run.model);
    const std::string whole = json_for_script_block(html_report_data(r.data(), r.run.model));
    const std::string open = "<script type=\"application/json\" id=\"stacksage-data\">";
    const std::size_t at = page.find(open);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(page.substr(at + open.size(), whole.size()), whole);
    EXPECT_EQ(page.substr(at + open.size() + whole.size(), 10), "</script>\n");

    // An analysis that left the load series' rows out (what `stacksage
    // report` runs): the page computes them per node, to the same page.
    AnalysedRun lean;
    lean.run = std::move(load_run(dir.str()).value());
    AnalysisOptions options;
    options.load_series_rows = false;
    lean.analysis = analyze(lean.run.model, options);
    ASSERT_FALSE(lean.analysis.loads.empty());
    EXPECT_TRUE(lean.analysis.loads.front().series.rows.empty());
    EXPECT_FALSE(r.analysis.loads.front().series.rows.empty());
    EXPECT_EQ(render_html_report(lean.data(), lean.run.model), page);
}
