// The HTML report (its embedded data, its escaping, no network), the
// Perfetto trace export and the GraphML export, on a run with a real 160-PU
// topology (tests/support/html_report_runs.hpp). The page's behaviour in a
// real browser is tested by tests/browser/ (ctest label "browser").
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "analysis/activity.hpp"
#include "analysis/analyzer.hpp"
#include "parsers/run_loader.hpp"
#include "parsers/xml_wellformed.hpp"
#include "reports/graphml_export.hpp"
#include "reports/html_report.hpp"
#include "reports/perfetto_export.hpp"
#include "tests/support/analysed_run.hpp"
#include "tests/support/html_report_runs.hpp"
#include "tests/support/shell.hpp"

using namespace stacksage;
using namespace stacksage::testing;
using json = nlohmann::json;

namespace {

using Analysed = AnalysedRun;

struct DemoRun {
    TempDir dir;
    Analysed a;
    DemoRun() {
        write_html_demo_run(dir.path());
        Result<LoadedRun> r = load_run(dir.str());
        EXPECT_TRUE(r) << (r ? "" : r.error().message);
        a.run = std::move(r.value());
        a.analysis = analyze(a.run.model);
    }
};

// The JSON between the data block's tags, as the page's script reads it.
std::string data_block(const std::string& page) {
    const std::string open = "<script type=\"application/json\" id=\"stacksage-data\">";
    const std::size_t at = page.find(open);
    if (at == std::string::npos) return {};
    const std::size_t from = at + open.size();
    return page.substr(from, page.find("</script>", from) - from);
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::size_t count_pus(const json& boxes) {
    std::size_t n = 0;
    for (const json& b : boxes) {
        if (b["t"] == "pu") ++n;
        if (b.contains("c")) n += count_pus(b["c"]);
    }
    return n;
}

// The drawn node of the section (node group) whose representative is `host`.
const json* node_named(const json& doc, const std::string& host) {
    for (const json& g : doc["groups"])
        if (g["node"]["host"] == host) return &g["node"];
    return nullptr;
}

const json* group_drawn_from(const json& doc, const std::string& host) {
    for (const json& g : doc["groups"])
        if (g["node"]["host"] == host) return &g;
    return nullptr;
}

using CliRun = stacksage::testing::Shell;
using stacksage::testing::shell;

std::string cli_path() { return std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage"; }

std::string read_text(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(HtmlReport, EmbedsOneDataBlockWithEachGroupsDrawnNodeAndFigures) {
    DemoRun r;
    const std::string page = render_html_report(r.a.data(), r.a.run.model);
    EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
    EXPECT_EQ(count_of(page, "type=\"application/json\""), 1u);
    const json doc = json::parse(data_block(page));
    EXPECT_EQ(doc["schema"], "stacksage-html-report");
    EXPECT_EQ(doc["version"], kHtmlReportDataVersion);
    // n01 and n02 differ: each is a group of its own, drawn from itself.
    ASSERT_EQ(doc["groups"].size(), 2u);
    EXPECT_EQ(doc["summary"]["nodes"], 2);
    EXPECT_EQ(doc["summary"]["processes"], 3);
    EXPECT_EQ(doc["summary"]["flows"], 24);
    ASSERT_NE(node_named(doc, "n01"), nullptr);
    ASSERT_NE(node_named(doc, "n02"), nullptr);
    EXPECT_EQ((*group_drawn_from(doc, "n01"))["hosts"], "n01");
    EXPECT_EQ((*group_drawn_from(doc, "n01"))["size"], 1);

    const json& n01 = *node_named(doc, "n01");
    EXPECT_EQ(n01["pus"].size(), 160u);
    EXPECT_EQ(count_pus(n01["boxes"]), 160u) << "every PU of the Sapphire Rapids node is a box";
    EXPECT_EQ(n01["allowed_active"].size(), 160u);
    EXPECT_EQ(n01["cpu_ms"].size(), 160u);
    // Packages at the top, with the cache chain folded into the cores' boxes.
    std::size_t packages = 0;
    for (const json& b : n01["boxes"]) packages += b["t"] == "package";
    EXPECT_EQ(packages, 2u);
    // PU 40-43 are over-subscribed by rank 1's eight threads: the finding says so, the page shows it.
    EXPECT_EQ(n01["oversubscribed"], "40-43");
    EXPECT_EQ(n01["worst"], "warning");
    bool overloaded = false;
    for (const json& f : (*group_drawn_from(doc, "n01"))["findings"])
        if (f["code"] == "overloaded-resources") overloaded = f["resources"] == "40-43";
    EXPECT_TRUE(overloaded) << (*group_drawn_from(doc, "n01"))["findings"].dump(1);
    EXPECT_TRUE(doc["findings"].empty()) << "the page's own findings list holds only the run-wide ones";
    // Flows allowed per PU, in the page's PU order.
    std::map<std::int64_t, std::size_t> index;
    for (std::size_t i = 0; i < n01["pus"].size(); ++i) index[n01["pus"][i].get<std::int64_t>()] = i;
    EXPECT_EQ(n01["allowed_active"][index[40]].get<int>() + n01["allowed_service"][index[40]].get<int>(), 8);
    EXPECT_EQ(n01["allowed_active"][index[3]], 1);
    EXPECT_EQ(n01["allowed_active"][index[100]], 0);
    // Memory levels, with the counts of the samples on each PU.
    ASSERT_TRUE(n01.contains("memory"));
    std::vector<std::string> levels;
    for (const json& l : n01["memory"]["levels"]) levels.push_back(l["level"]);
    EXPECT_EQ(levels, (std::vector<std::string>{"L1", "L2", "L3", "local_dram", "remote_dram"}));
    EXPECT_EQ(n01["memory"]["levels"][0]["per_pu"][index[3]], 1300);
    EXPECT_EQ(n01["memory"]["levels"][4]["per_pu"][index[0]], 0);
    EXPECT_EQ(n01["memory"]["levels"][4]["per_pu"][index[5]], 250);
    EXPECT_FALSE(node_named(doc, "n02")->contains("memory"));

    // Flows: 8 + 8 + 8, with the affinity change of rank 0's last worker.
    EXPECT_EQ(doc["flows"].size(), 24u);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < doc["flow_columns"].size(); ++i) col[doc["flow_columns"][i]] = i;
    bool rebound = false;
    for (const json& f : doc["flows"])
        if (f[col["tid"]] == 100007) {
            ASSERT_EQ(f[col["affinity"]].size(), 2u);
            rebound = f[col["affinity"]][0][2] == "7" && f[col["affinity"]][1][2] == "8";
        }
    EXPECT_TRUE(rebound);
}

TEST(HtmlReport, InjectedThreadNameAndCommandLineStayText) {
    DemoRun r;
    const std::string page = render_html_report(r.a.data(), r.a.run.model);
    // Nothing of the injections reaches the markup: exactly two </script> (the data block's and
    // the renderer's), no <img>, no second <script> element.
    EXPECT_EQ(count_of(page, "</script>"), 2u);
    EXPECT_EQ(count_of(page, "<script"), 2u);
    EXPECT_EQ(page.find("<img"), std::string::npos);
    EXPECT_EQ(page.find("__pwned=1</script>"), std::string::npos);
    const std::string block = data_block(page);
    EXPECT_EQ(block.find('<'), std::string::npos);
    EXPECT_EQ(block.find('>'), std::string::npos);
    EXPECT_EQ(block.find('&'), std::string::npos);
    // ... and the data gives the strings back unchanged.
    const json doc = json::parse(block);
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < doc["flow_columns"].size(); ++i) col[doc["flow_columns"][i]] = i;
    bool named = false;
    for (const json& f : doc["flows"]) named |= f[col["name"]] == kInjectedThreadName;
    EXPECT_TRUE(named);
    bool cmdline = false;
    for (const json& p : doc["processes"]) cmdline |= p["cmdline"].get<std::string>().find(kInjectedExe) != std::string::npos;
    EXPECT_TRUE(cmdline);
    // The renderer writes data only through textContent.
    EXPECT_EQ(page.find("innerHTML"), std::string::npos);
    EXPECT_EQ(page.find("insertAdjacentHTML"), std::string::npos);
    EXPECT_EQ(page.find("document.write"), std::string::npos);
}

TEST(HtmlReport, LoadsNothingFromTheNetwork) {
    DemoRun r;
    const std::string page = render_html_report(r.a.data(), r.a.run.model);
    EXPECT_EQ(page.find("https://"), std::string::npos);
    EXPECT_EQ(page.find("<link"), std::string::npos);
    EXPECT_EQ(page.find("<script src"), std::string::npos);
    EXPECT_EQ(page.find("url("), std::string::npos);
    EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
    // The only http:// is the SVG namespace name, which is never fetched.
    EXPECT_EQ(count_of(page, "http://"), count_of(page, "http://www.w3.org/2000/svg"));
}

TEST(HtmlReport, ScriptBlockEscaping) {
    const json v = {{"a", "</script><!-- & \xe2\x80\xa8"}};
    const std::string s = json_for_script_block(v);
    EXPECT_EQ(s, "{\"a\":\"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\"}");
    EXPECT_EQ(json::parse(s), v);
    EXPECT_EQ(html_escape("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    // Invalid UTF-8 from a thread name becomes U+FFFD rather than breaking the page.
    EXPECT_EQ(json::parse(json_for_script_block(json("bad\xff"))).get<std::string>(), "bad\xef\xbf\xbd");
}

TEST(HtmlReport, RunWithoutTopologyOrFlowsStillRenders) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_process(busy_process("lonely", 10, 0, 2, "0-1"));  // no topology.xml: rebuilt from the cpusets
    Result<LoadedRun> r = load_run(dir.str());
    ASSERT_TRUE(r);
    Analysed a{std::move(r.value()), {}};
    a.analysis = analyze(a.run.model);
    const json doc = json::parse(data_block(render_html_report(a.data(), a.run.model)));
    ASSERT_EQ(doc["groups"].size(), 1u);
    EXPECT_EQ(doc["groups"][0]["node"]["topology"], "cpusets-seen");
}

// The reports render the analysis they are given: analysed with other
// activity options than the defaults, the page's flow states and allowed
// counts and the trace's states are the analysis' own, not those of a view
// rebuilt with default options.
TEST(HtmlReport, RendersTheAnalysisViewNotADefaultRebuild) {
    DemoRun r;
    AnalysisOptions options;
    options.activity.service_fraction = 2.0;  // every classified flow turns service
    options.activity.min_lifetime_ns = 0;
    r.a.analysis = analyze(r.a.run.model, options);
    const AnalysisResult& a = r.a.analysis;
    const RunView defaults = build_run_view(r.a.run.model);
    ASSERT_EQ(a.view.flows.size(), defaults.flows.size());
    std::size_t differing = 0;
    for (std::size_t i = 0; i < defaults.flows.size(); ++i)
        if (activity_state(a.view.flows[i]) != activity_state(defaults.flows[i])) ++differing;
    ASSERT_GT(differing, 0u) << "the options must change some flow's state for this test to mean anything";

    const json doc = html_report_data(r.a.data(), r.a.run.model);
    const auto& columns = doc["flow_columns"];
    const std::size_t state = std::find(columns.begin(), columns.end(), "state") - columns.begin();
    ASSERT_EQ(doc["flows"].size(), a.view.flows.size());
    for (std::size_t i = 0; i < a.view.flows.size(); ++i)
        EXPECT_EQ(doc["flows"][i][state], std::string(activity_state(a.view.flows[i]))) << i;
    ASSERT_EQ(doc["groups"].size(), a.view.nodes.size()) << "each node of the demo run is a group of its own";
    for (std::size_t n = 0; n < a.view.nodes.size(); ++n) {
        const json* drawn = node_named(doc, a.nodes[n].host);
        ASSERT_NE(drawn, nullptr) << a.nodes[n].host;
        std::uint64_t service = 0, expected = 0;
        for (std::uint32_t v : (*drawn)["allowed_service"]) service += v;
        for (const auto& [cpu, u] : a.pu_usage[n].by_cpu) expected += u.service_flows;
        EXPECT_EQ(service, expected) << a.nodes[n].host;
    }

    std::map<std::tuple<std::string, std::int64_t, std::int64_t>, std::string> trace_state;  // by host, pid, tid
    const json trace = perfetto_trace(a);  // kept: a range over a part of a temporary would dangle
    for (const json& e : trace["traceEvents"])
        if (e["ph"] == "X") trace_state[{e["args"]["host"], e["args"]["pid"], e["args"]["tid"]}] = e["args"]["state"];
    ASSERT_FALSE(trace_state.empty());
    for (const FlowView& f : a.view.flows) {
        const ProcessView& p = a.view.processes[f.process];
        const std::string host(a.view.nodes[p.node].host);
        const std::string& state = trace_state[{host, p.pid, f.tid}];
        EXPECT_EQ(state, std::string(activity_state(f))) << host << " " << f.tid;
    }
}

TEST(PerfettoExport, IsTraceEventFormatWithLifetimesAndAffinityChanges) {
    DemoRun r;
    const json trace = json::parse(perfetto_trace(r.a.analysis).dump());
    ASSERT_TRUE(trace["traceEvents"].is_array());
    std::size_t complete = 0, instants = 0, names = 0;
    std::set<std::pair<std::int64_t, std::int64_t>> tracks;
    for (const json& e : trace["traceEvents"]) {
        ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
        ASSERT_TRUE(e.contains("pid") && e["pid"].is_number_integer()) << e.dump();
        ASSERT_TRUE(e.contains("tid") && e["tid"].is_number_integer()) << e.dump();
        ASSERT_TRUE(e.contains("name") && e["name"].is_string()) << e.dump();
        const std::string ph = e["ph"];
        EXPECT_TRUE(ph == "X" || ph == "i" || ph == "M") << ph;
        if (ph == "M") {
            ASSERT_TRUE(e["args"].contains("name") || e["args"].contains("sort_index"));
            if (e["name"] == "thread_name" && e["args"]["name"] == kInjectedThreadName) ++names;
            continue;
        }
        ASSERT_TRUE(e["ts"].is_number()) << e.dump();
        EXPECT_GE(e["ts"].get<double>(), 0.0);
        if (ph == "X") {
            ++complete;
            ASSERT_TRUE(e["dur"].is_number());
            EXPECT_GT(e["dur"].get<double>(), 0.0);
            EXPECT_TRUE(tracks.emplace(e["pid"], e["tid"]).second) << "one lifetime per thread track";
            EXPECT_FALSE(e["args"]["runtime"].get<std::string>().empty());
        } else {
            ++instants;
            EXPECT_EQ(e["s"], "t");
            EXPECT_EQ(e["name"], "affinity");
            EXPECT_EQ(e["tid"], 100007);
            EXPECT_EQ(e["args"]["cpuset"], "8");
            EXPECT_EQ(e["args"]["previous"], "7");
            // 4 s after the process start, 1 s after the host's first event.
            EXPECT_NEAR(e["ts"].get<double>(), 4'000'000.0, 1.0);
        }
    }
    EXPECT_EQ(complete, 24u);
    EXPECT_EQ(instants, 1u);
    EXPECT_EQ(names, 1u);
}

// GraphML: well-formed (xmllint --noout and our strict checker), and the
// structure of the GraphML schema checked element by element. The official
// XSD (graphml.graphdrawing.org) cannot be fetched here, so this is a
// structural validation, not `xmllint --schema`.
TEST(GraphmlExport, IsWellFormedAndFollowsTheGraphmlStructure) {
    DemoRun r;
    const Model& m = r.a.run.model;
    const std::string xml = model_to_graphml(m);

    std::map<std::string, std::string> key_domain;  // id -> for
    std::set<std::string> node_ids, edge_ids, attr_names;
    std::vector<std::pair<std::string, std::string>> edges;
    std::string current;  // the element data belongs to: "graphml", "node" or "edge"
    std::size_t data_elements = 0, typed_paths = 0;
    std::vector<std::string> problems;
    const std::set<std::string> types = {"boolean", "int", "long", "float", "double", "string"};
    auto attr = [](std::span<const XmlAttribute> as, std::string_view name) -> std::string {
        for (const XmlAttribute& a : as)
            if (a.name == name) return std::string(a.raw_value);
        return {};
    };
    auto nmtoken = [](const std::string& s) {
        if (s.empty()) return false;
        for (char c : s)
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' || c == ':')) return false;
        return true;
    };
    XmlProblem problem;
    const bool ok = is_well_formed_xml(xml, &problem, [&](std::string_view tag, std::span<const XmlAttribute> as) -> std::string {
        const std::string t(tag);
        if (t == "graphml") {
            if (attr(as, "xmlns") != "http://graphml.graphdrawing.org/xmlns") return "wrong namespace";
            current = "graphml";
        } else if (t == "key") {
            if (!node_ids.empty() || !edge_ids.empty()) return "key after the graph";
            const std::string id = attr(as, "id"), domain = attr(as, "for");
            if (id.empty() || !key_domain.emplace(id, domain).second) return "key id missing or repeated";
            if (domain != "node" && domain != "edge" && domain != "graph" && domain != "all") return "bad key domain";
            if (!types.count(attr(as, "attr.type"))) return "bad attr.type";
            if (!nmtoken(attr(as, "attr.name"))) return "attr.name is not an NMTOKEN: " + attr(as, "attr.name");
            if (!attr_names.insert(domain + "/" + attr(as, "attr.name")).second) return "attr.name repeated";
        } else if (t == "graph") {
            const std::string d = attr(as, "edgedefault");
            if (d != "directed" && d != "undirected") return "bad edgedefault";
        } else if (t == "node") {
            if (!node_ids.insert(attr(as, "id")).second) return "node id repeated";
            current = "node";
        } else if (t == "edge") {
            if (!edge_ids.insert(attr(as, "id")).second) return "edge id repeated";
            edges.emplace_back(attr(as, "source"), attr(as, "target"));
            const std::string dir = attr(as, "directed");
            if (!dir.empty() && dir != "true" && dir != "false") return "bad directed";
            current = "edge";
        } else if (t == "data") {
            ++data_elements;
            const auto k = key_domain.find(attr(as, "key"));
            if (k == key_domain.end()) return "data with an undeclared key";
            if (k->second != current && k->second != "all") return "data key of another domain";
        } else if (t != "desc") {
            return "element GraphML does not have: " + t;
        }
        return "";
    });
    ASSERT_TRUE(ok) << problem.line << ":" << problem.column << " " << problem.what;
    EXPECT_EQ(node_ids.size(), m.component_count());
    std::size_t tree_edges = 0;
    m.for_each_component([&](ComponentId c) { tree_edges += m.parent(c) != kNoComponent; });
    EXPECT_EQ(edge_ids.size(), tree_edges + m.datapath_count());
    for (const auto& [s, t] : edges) {
        EXPECT_TRUE(node_ids.count(s)) << s;
        EXPECT_TRUE(node_ids.count(t)) << t;
    }
    EXPECT_GT(data_elements, node_ids.size());
    for (const char* type : {"MayRunOn", "MemoryAccess", "child"})
        typed_paths += xml.find(std::string(">") + type + "</data>") != std::string::npos;
    EXPECT_EQ(typed_paths, 3u);
    EXPECT_NE(xml.find(xml_escape(kInjectedThreadName)), std::string::npos);
    EXPECT_EQ(xml.find(kInjectedThreadName), std::string::npos);

    // And libxml2 agrees, where xmllint is installed.
    if (shell("command -v xmllint").exit_code == 0) {
        TempDir out;
        SyntheticRun::write_file(out.path() / "model.graphml", xml);
        const CliRun lint = shell("xmllint --noout " + (out.path() / "model.graphml").string());
        EXPECT_EQ(lint.exit_code, 0) << lint.output;
    }
}

TEST(GraphmlExport, XmlEscapingReplacesWhatXmlCannotHold) {
    EXPECT_EQ(xml_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&apos;");
    EXPECT_EQ(xml_escape(std::string("x\x01y", 3)), "x\xef\xbf\xbdy");
    EXPECT_EQ(xml_escape("\xc3\xa9\xff"), "\xc3\xa9\xef\xbf\xbd");
    EXPECT_EQ(xml_escape("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd") << "surrogates are not UTF-8";
}

TEST(ReportCommand, WritesTheHtmlPageAndTheExports) {
    TempDir dir;
    write_html_demo_run(dir.path() / "run");
    const std::string run = (dir.path() / "run").string(), page = (dir.path() / "r.html").string();
    const CliRun html = shell(cli_path() + " report " + run + " --html " + page);
    EXPECT_EQ(html.exit_code, 0) << html.output;
    EXPECT_NE(html.output.find("Analysis conclusion"), std::string::npos) << "the terminal report is still printed";
    EXPECT_NE(html.output.find("wrote the HTML report to " + page), std::string::npos) << html.output;
    EXPECT_EQ(json::parse(data_block(read_text(page)))["groups"].size(), 2u);

    const CliRun trace = shell(cli_path() + " report " + run + " --format perfetto -o " + (dir.path() / "t.json").string());
    EXPECT_EQ(trace.exit_code, 0) << trace.output;
    EXPECT_TRUE(json::parse(read_text(dir.path() / "t.json"))["traceEvents"].is_array());

    const CliRun graph = shell(cli_path() + " report " + run + " --format graphml");
    EXPECT_EQ(graph.exit_code, 0);
    EXPECT_EQ(graph.output.rfind("<?xml", 0), 0u);
    EXPECT_TRUE(is_well_formed_xml(graph.output, nullptr));

    const CliRun bad = shell(cli_path() + " report " + run + " --html /nonexistent-dir/r.html");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.output.find("cannot write '/nonexistent-dir/r.html'"), std::string::npos) << bad.output;
}
