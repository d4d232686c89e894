// Code and data attribution after the run (issue 30), above the recorder: a
// sampling summary whose sites and objects point at real code and data of
// this program (tests/support/attributed_summary.hpp) placed in the model;
// the MemoryAccess paths carry their call site and object, the heatmap
// lists call sites per level and objects, the NUMA findings name them, the
// text and JSON reports show them.
#include <gtest/gtest.h>

#include <set>

#include "analysis/launcher.hpp"
#include "analysis/memory_heatmap.hpp"
#include "analysis/numa_locality_check.hpp"
#include "analysis/run_view.hpp"
#include "analysis/analyzer.hpp"
#include "reports/html_report.hpp"
#include "reports/memory_heatmap_json.hpp"
#include "reports/memory_heatmap_text.hpp"
#include "tests/support/attributed_run.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace mk = memory_access_keys;

namespace {

SampledAccess access(std::int64_t tid, std::int64_t cpu, const std::string& backend, const std::string& level,
                     std::int64_t node, bool remote, std::uint64_t count, std::int64_t site, std::int64_t object) {
    return test::attributed_access(tid, cpu, backend, level, node, remote, count, site, object);
}

std::string line_of(const std::string& marker) { return std::to_string(test::attributed_line(marker)); }
const std::string kFile = "attributed_summary.hpp";
std::string site_label(const std::string& function) { return function + " (" + kFile + ":" + line_of(function) + ")"; }

struct RunDirectory {
    TempDir dir;
};
struct AttributedRun : RunDirectory, test::AttributedRun {
    AttributedRun() : test::AttributedRun(dir.path()) {}
    // The paths with this site label.
    std::vector<DataPathId> paths_of_site(const std::string& site) const {
        const Model& m = run.model;
        std::vector<DataPathId> out;
        const AttrKey key = *m.find_key(mk::site);
        for (ComponentId pu : m.components_of_type(ComponentType::Thread))
            for (DataPathId dp : m.datapaths(pu, DataPathType::MemoryAccess, Direction::Out))
                if (m.get_string(dp, key).value_or("") == site) out.push_back(dp);
        return out;
    }
    std::string text(DataPathId dp, std::string_view key) const {
        return std::string(run.model.get_string(dp, *run.model.find_key(key)).value_or("<none>"));
    }
};

const Finding* find(const std::vector<Finding>& fs, const std::string& code) {
    for (const Finding& f : fs)
        if (to_string(f.code) == code) return &f;
    return nullptr;
}

}  // namespace

TEST(CodeDataAttribution, MemoryAccessPathsCarryTheirCallSiteCallPathAndObject) {
    AttributedRun t;
    EXPECT_TRUE(t.run.model.check_consistency().empty());
    EXPECT_EQ(t.stats.sites, 3u);
    const std::vector<DataPathId> init = t.paths_of_site(site_label("init_mesh"));
    ASSERT_EQ(init.size(), 1u);
    EXPECT_EQ(t.run.model.get_int(init[0], keys::count), 92);
    // The caller's line is the line of its call.
    EXPECT_EQ(t.text(init[0], mk::call_path).rfind(site_label("init_mesh") + " < setup_mesh (" + kFile + ":" +
                                                       line_of("setup_init") + ")",
                                                   0),
              0u)
        << t.text(init[0], mk::call_path);
    EXPECT_EQ(t.text(init[0], mk::object),
              "heap block of 80 MiB allocated at " + kFile + ":" + line_of("alloc_mesh") + " in alloc_mesh");
    EXPECT_EQ(t.text(init[0], mk::object_kind), "heap");

    // compute_mesh: one path per (PU, target, level, backend, object).
    const std::vector<DataPathId> compute = t.paths_of_site(site_label("compute_mesh"));
    EXPECT_EQ(compute.size(), 4u);
    std::set<std::string> objects;
    for (DataPathId dp : compute) objects.insert(t.text(dp, mk::object));
    EXPECT_TRUE(objects.count("static `stacksage_test_mesh_table` in unit_code_data_attribution")) << *objects.begin();
    EXPECT_TRUE(objects.count("stack of thread 471101"));
    // Samples without a site keep their path, without site attributes.
    EXPECT_EQ(t.paths_of_site("<none>").size(), 0u);
}

TEST(CodeDataAttribution, TheModelKeepsAtMostTheTopPairsPerProcessAndSaysWhatItSummed) {
    AttributedRun t;
    Model& m = t.run.model;
    const ComponentId node = m.components_of_type(ComponentType::Node).front();
    SampleSummary s;
    s.path = "n01/many.samples.jsonl";
    s.pid = 4711;
    s.attribution.present = true;
    // Sites in no recorded mapping: each its own label ("0x1000", ...).
    const std::size_t n = kMaxAttributedPairs + 6;
    for (std::size_t i = 0; i < n; ++i) {
        SampledSite site;
        site.id = static_cast<std::int64_t>(i);
        site.ip = 0x1000 * (i + 1);
        site.unwind = "none";
        s.sites.push_back(site);
        s.accesses.push_back(access(4711, 2, "pebs", "L2", -1, false, 1000 - i, site.id, -1));
    }
    const MemoryPathStats stats = add_sample_summary(m, node, s, [](std::int64_t) { return kNoComponent; });
    const ComponentId pu2 = m.find(ComponentType::Thread, 2, node);
    const auto paths = m.datapaths(pu2, DataPathType::MemoryAccess, Direction::Out);
    EXPECT_EQ(paths.size(), kMaxAttributedPairs + 1);  // the kept pairs, and one without a site
    std::uint64_t merged = 0;
    for (DataPathId dp : paths)
        if (!m.get_string(dp, *m.find_key(mk::site))) merged = static_cast<std::uint64_t>(*m.get_int(dp, keys::count));
    EXPECT_EQ(merged, 1000 - 64 + 1000 - 65 + 1000 - 66 + 1000 - 67 + 1000 - 68 + 1000 - 69);
    bool said = false;
    for (const std::string& note : stats.notes)
        if (note.find(std::to_string(merged) + " samples of 6 further (call site, object) pairs are summed") != std::string::npos)
            said = true;
    EXPECT_TRUE(said) << ::testing::PrintToString(stats.notes);
}

TEST(CodeDataAttribution, HeatmapListsCallSitesPerLevelAndObjects) {
    AttributedRun t;
    const auto maps = build_memory_heatmaps(t.run.model);
    ASSERT_EQ(maps.size(), 1u);
    const NodeMemoryHeatmap& h = maps[0];
    ASSERT_EQ(h.sites.size(), 2u);
    EXPECT_EQ(h.sites[0].label, site_label("compute_mesh"));  // 1,008 samples
    EXPECT_EQ(h.sites[0].accesses, 1000u);
    EXPECT_EQ(h.sites[0].first_touch, 8u);
    EXPECT_EQ(h.sites[1].label, site_label("init_mesh"));
    EXPECT_EQ(h.sites[1].first_touch, 92u);
    EXPECT_EQ(h.samples_without_site, 50u);
    ASSERT_EQ(h.levels.size(), 3u);  // L1, local_dram, remote_dram
    const auto top_remote = top_sites_of_level(h, 2, 5);
    ASSERT_EQ(top_remote.size(), 1u);
    EXPECT_EQ(top_remote[0].first->label, site_label("compute_mesh"));
    EXPECT_EQ(top_remote[0].second, 600u);
    const auto first = top_first_touch_sites(h, 5);
    ASSERT_EQ(first.size(), 2u);
    EXPECT_EQ(first[0].first->label, site_label("init_mesh"));
    ASSERT_EQ(h.objects.size(), 3u);
    EXPECT_EQ(h.objects[0].detail, "heap");
    EXPECT_EQ(h.objects[0].per_level, (std::vector<std::uint64_t>{0, 0, 600}));
    EXPECT_EQ(h.objects[0].first_touch, 100u);
}

TEST(CodeDataAttribution, SerialFirstTouchAndRemoteAccessNameTheirCallSitesAndObjects) {
    AttributedRun t;
    const RunView view = build_run_view(t.run.model);
    const std::vector<Finding> findings = check_numa_locality(view, detect_launcher(view));
    const std::string mesh = "heap block of 80 MiB allocated at " + kFile + ":" + line_of("alloc_mesh") + " in alloc_mesh";
    const Finding* serial = find(findings, "numa-serial-first-touch");
    ASSERT_NE(serial, nullptr);
    EXPECT_EQ(serial->detail.rfind("92 % of the first touches of the " + mesh + " were by the main thread (4711) in " +
                                       site_label("init_mesh") + "; thread 4711 caused 92 of 100 sampled page faults",
                                   0),
              0u)
        << serial->detail;
    const Finding* remote = find(findings, "numa-remote-access");
    ASSERT_NE(remote, nullptr);
    EXPECT_EQ(remote->detail.rfind("100 % of the remote DRAM samples were issued in " + site_label("compute_mesh") +
                                       "; 100 % were of the " + mesh + "; thread 471101",
                                   0),
              0u)
        << remote->detail;
}

TEST(CodeDataAttribution, TextAndJsonListTheTopCallSitesPerLevel) {
    AttributedRun t;
    const auto maps = build_memory_heatmaps(t.run.model);
    const std::string text = render_memory_heatmaps(maps);
    EXPECT_NE(text.find("call sites: " + site_label("compute_mesh") + " 100 %\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  call sites: " + site_label("init_mesh") + " 92 %, " + site_label("compute_mesh") + " 8 %\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Data objects on n01 (most samples first):\n  heap block of 80 MiB allocated at"), std::string::npos)
        << text;
    EXPECT_NE(text.find("600 accesses (remote_dram 100.0 %), 100 first touches\n"), std::string::npos) << text;

    const nlohmann::json j = memory_heatmaps_to_json(maps);
    const auto& remote = j[0]["levels"][2];
    EXPECT_EQ(remote["level"], "remote_dram");
    ASSERT_EQ(remote["top_sites"].size(), 1u);
    EXPECT_EQ(remote["top_sites"][0]["site"], site_label("compute_mesh"));
    EXPECT_EQ(remote["top_sites"][0]["samples"], 600);
    EXPECT_EQ(j[0]["first_touch"]["top_sites"][0]["site"], site_label("init_mesh"));
    EXPECT_EQ(j[0]["sites"][0]["per_level"]["L1"], 300);
    EXPECT_EQ(j[0]["objects"][0]["kind"], "heap");
    EXPECT_EQ(j[0]["objects"][0]["first_touch"], 100);
    EXPECT_EQ(j[0]["samples_without_site"], 50);
}

TEST(CodeDataAttribution, TheHtmlPageEmbedsCallSitesAndObjectsPerLevel) {
    AttributedRun t;
    const AnalysisResult analysis = analyze(t.run.model);
    ReportData data;
    data.analysis = &analysis;
    data.notes = &t.run.notes;
    const nlohmann::json page = html_report_data(data, t.run.model);
    const nlohmann::json& memory = page["groups"][0]["node"]["memory"];
    // Levels L1, local_dram, remote_dram, then first touches: the rows' counts in that order.
    ASSERT_EQ(memory["levels"].size(), 4u);
    EXPECT_EQ(memory["levels"][3]["level"], "first_touch");
    ASSERT_EQ(memory["sites"].size(), 2u);
    EXPECT_EQ(memory["sites"][0]["site"], site_label("compute_mesh"));
    EXPECT_EQ(memory["sites"][0]["per_level"], nlohmann::json({300, 100, 600, 8}));
    EXPECT_EQ(memory["sites"][1]["per_level"], nlohmann::json({0, 0, 0, 92}));
    ASSERT_EQ(memory["objects"].size(), 3u);
    EXPECT_EQ(memory["objects"][0]["kind"], "heap");
    EXPECT_EQ(memory["objects"][0]["per_level"], nlohmann::json({0, 0, 600, 100}));
    const std::string html = render_html_report(data, t.run.model);
    EXPECT_NE(html.find("<table id=\"sites\">"), std::string::npos);
    EXPECT_NE(html.find("<div id=\"objects\">"), std::string::npos);
}
