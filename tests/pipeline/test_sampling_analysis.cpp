// Memory samples in the analysis: heatmap data per level, the NUMA locality
// check, and the terminal heatmap, on recorded runs (synthetic event logs on
// a real two-socket topology, with sampling summaries next to them).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "analysis/launcher.hpp"
#include "analysis/memory_heatmap.hpp"
#include "analysis/numa_locality_check.hpp"
#include "analysis/run_view.hpp"
#include "parsers/run_loader.hpp"
#include "reports/memory_heatmap_json.hpp"
#include "reports/memory_heatmap_text.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace fs = std::filesystem;

namespace {

std::string data(const std::string& rel) { return std::string(STACKSAGE_TEST_DATA_DIR) + "/" + rel; }

std::string access(std::int64_t tid, int cpu, const std::string& level, const std::string& op, int node, bool remote,
                   std::uint64_t count, std::uint64_t latency, const std::string& backend = "pebs") {
    std::string hist = "[";
    for (int b = 0; b < 16; ++b) hist += std::string(b ? "," : "") + (b == 8 ? std::to_string(count) : "0");
    hist += "]";
    return "{\"v\":1,\"rec\":\"access\",\"tid\":" + std::to_string(tid) + ",\"backend\":\"" + backend +
           "\",\"cpu\":" + std::to_string(cpu) + ",\"level\":\"" + level + "\",\"op\":\"" + op +
           "\",\"node\":" + std::to_string(node) + ",\"remote\":" + (remote ? "true" : "false") +
           ",\"hops\":0,\"missed\":false,\"count\":" + std::to_string(count) +
           ",\"weight_sum\":" + std::to_string(count * latency) + ",\"weight_max\":" + std::to_string(latency) +
           ",\"latency_histogram\":" + hist + "}\n";
}

std::string summary_header(std::int64_t pid) {
    return "{\"v\":1,\"rec\":\"sampling\",\"pid\":" + std::to_string(pid) +
           ",\"host\":\"n01\",\"start_ns\":1,\"end_ns\":2,\"requested\":\"auto\",\"used\":[\"pebs\",\"pagefault\"],"
           "\"periods\":{\"pebs\":2003,\"ibs\":65536,\"pagefault\":1,\"cpuclock_ns\":1000000}}\n";
}

// pid 4711 on the two-socket machine: its main thread runs on PU 0 (NUMA
// node 0), its second thread on PU 8 (node 1). The main thread initialised
// the data (first touch, all on node 0) and most of its DRAM samples come
// from node 1.
struct TwoSocketRun {
    TempDir dir;
    LoadedRun run;
    std::int64_t worker = 4711 * 100 + 1;
    explicit TwoSocketRun(bool parallel_init = false) {
        SyntheticRun r(dir.path());
        r.write_run_json();
        r.copy_topology("n01", data("hwloc-xml/32em64t-2n8c2t-pci-normalio.xml"));
        SyntheticProcess p = busy_process("n01", 4711, -1, 2, "0");
        p.threads[0].cpuset = "8";
        r.add_process(p);
        std::string s = summary_header(4711);
        s += access(4711, 0, "L1", "load", -1, false, 500, 5);
        s += access(4711, 0, "L1", "store", -1, false, 100, 0);
        s += access(4711, 0, "local_dram", "load", 0, false, 300, 200);
        s += access(4711, 0, "remote_dram", "load", 1, true, 700, 350);
        s += access(worker, 8, "L2", "load", -1, false, 200, 14);
        s += access(worker, 8, "local_dram", "load", 1, false, 400, 200);
        if (parallel_init) {
            s += access(4711, 0, "unknown", "unknown", 0, false, 450, 0, "pagefault");
            s += access(worker, 8, "unknown", "unknown", 1, false, 470, 0, "pagefault");
        } else {
            s += access(4711, 0, "unknown", "unknown", 0, false, 900, 0, "pagefault");
            s += access(worker, 8, "unknown", "unknown", 1, false, 20, 0, "pagefault");
        }
        s += "{\"v\":1,\"rec\":\"end\",\"threads\":2}\n";
        SyntheticRun::write_file(dir.path() / "n01" / "pid-4711.samples.jsonl", s);
        auto loaded = load_run(dir.str());
        EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().message);
        run = std::move(loaded.value());
    }
};

const Finding* find(const std::vector<Finding>& fs, const std::string& code) {
    for (const Finding& f : fs)
        if (to_string(f.code) == code) return &f;
    return nullptr;
}

}  // namespace

TEST(SamplingAnalysis, HeatmapPerLevelPuCoreAndTarget) {
    TwoSocketRun t;
    const Model& m = t.run.model;
    const auto maps = build_memory_heatmaps(m);
    ASSERT_EQ(maps.size(), 1u);
    const NodeMemoryHeatmap& h = maps[0];
    EXPECT_EQ(h.host, "n01");
    EXPECT_EQ(h.pus.size(), 32u);
    EXPECT_EQ(h.cores.size(), 16u);
    EXPECT_EQ(h.access_samples, 2200u);
    ASSERT_EQ(h.levels.size(), 4u);
    EXPECT_EQ(h.levels[0].level, "L1");
    EXPECT_EQ(h.levels[1].level, "L2");
    EXPECT_EQ(h.levels[2].level, "local_dram");
    EXPECT_EQ(h.levels[3].level, "remote_dram");
    EXPECT_NEAR(h.levels[3].share, 700.0 / 2200.0, 1e-9);
    EXPECT_EQ(h.levels[0].stores, 100u);
    EXPECT_EQ(h.levels[3].remote, 700u);
    EXPECT_DOUBLE_EQ(h.levels[3].mean_latency, 350.0);
    // Per PU, in topology order: PU 0 is the first, PU 8 package 1's first.
    std::size_t pu0 = 99, pu8 = 99;
    for (std::size_t i = 0; i < h.pus.size(); ++i) {
        if (m.os_index(h.pus[i]) == 0) pu0 = i;
        if (m.os_index(h.pus[i]) == 8) pu8 = i;
    }
    ASSERT_NE(pu0, 99u);
    EXPECT_EQ(h.levels[2].per_pu[pu0], 300u);
    EXPECT_EQ(h.levels[2].per_pu[pu8], 400u);
    EXPECT_EQ(h.levels[0].per_core[h.core_of_pu[pu0]], 600u);
    // Local DRAM goes to both nodes' memory, one per issuing PU.
    ASSERT_EQ(h.levels[2].per_target.size(), 2u);
    EXPECT_EQ(h.levels[2].per_target[0].type, ComponentType::Numa);
    EXPECT_EQ(h.levels[2].per_target[0].samples, 400u) << "node 1's memory, from PU 8";
    EXPECT_EQ(h.levels[2].per_target[0].os_index, 1);
    EXPECT_EQ(h.pu_os[pu8], 8);
    EXPECT_EQ(h.first_touch_samples, 920u);
    ASSERT_EQ(h.first_touch_per_numa.size(), 2u);
    EXPECT_EQ(h.first_touch_per_numa[0].first, 0);
    EXPECT_EQ(h.first_touch_per_numa[0].second, 900u);
    EXPECT_EQ(h.first_touch_unresolved, 0u);
    EXPECT_EQ(h.numa_nodes, 2u);
    EXPECT_EQ(h.first_touch_locality, FirstTouchLocality::Local) << "each page sits on its toucher's node";
    // Every backend that delivered samples, the page faults too; the access heatmap's own apart.
    EXPECT_EQ(h.backends, (std::vector<std::string>{"pebs", "pagefault"}));
    EXPECT_EQ(h.access_backends, (std::vector<std::string>{"pebs"}));
    ASSERT_EQ(h.samples_by_backend.size(), 2u);
    EXPECT_EQ(h.samples_by_backend[0], (std::pair<std::string, std::uint64_t>{"pebs", 2200}));
    EXPECT_EQ(h.samples_by_backend[1], (std::pair<std::string, std::uint64_t>{"pagefault", 920}));
}

namespace {

// pid 50 on a one-NUMA machine, sampled with page faults and cpu-clock only
// (what a VM offers): 30 of its 100 sampled pages were gone before the
// recorder looked up their node.
LoadedRun one_numa_pagefault_run(const TempDir& dir, std::uint64_t unresolved) {
    SyntheticRun r(dir.path());
    r.write_run_json();
    r.add_host("n01", "pack:1 core:2 pu:1");
    r.add_process(busy_process("n01", 50, -1, 1, "0-1"));
    std::string s = summary_header(50) + access(50, 0, "unknown", "unknown", 0, false, 100 - unresolved, 0, "pagefault") +
                    access(50, 1, "unknown", "unknown", -1, false, unresolved, 0, "pagefault") +
                    "{\"v\":1,\"rec\":\"ran_on\",\"tid\":50,\"cpu\":1,\"count\":17}\n"
                    "{\"v\":1,\"rec\":\"end\",\"threads\":1}\n";
    SyntheticRun::write_file(dir.path() / "n01" / "pid-50.samples.jsonl", s);
    auto loaded = load_run(dir.str());
    EXPECT_TRUE(loaded.ok()) << (loaded.ok() ? "" : loaded.error().message);
    return std::move(loaded.value());
}

}  // namespace

TEST(SamplingAnalysis, FirstTouchOnOneNumaNodeSaysEveryShareAndThatLocalityCannotBeAnIssue) {
    TempDir dir;
    const LoadedRun run = one_numa_pagefault_run(dir, 30);
    const auto maps = build_memory_heatmaps(run.model);
    ASSERT_EQ(maps.size(), 1u);
    const NodeMemoryHeatmap& h = maps[0];
    EXPECT_EQ(h.numa_nodes, 1u);
    EXPECT_EQ(h.first_touch_samples, 100u);
    EXPECT_EQ(h.first_touch_unresolved, 30u);
    EXPECT_EQ(h.first_touch_locality, FirstTouchLocality::SingleNumaNode);
    EXPECT_EQ(h.access_samples, 0u);
    EXPECT_EQ(h.backends, (std::vector<std::string>{"pagefault", "cpuclock"})) << "both backends delivered samples";
    EXPECT_TRUE(h.access_backends.empty());

    const std::string text = render_memory_heatmaps(maps);
    EXPECT_NE(text.find("First touch on n01 (pagefault, 100 samples): node 0 70.0 %, unresolved 30.0 % (pages freed "
                        "or unmapped before the recorder could look up their NUMA node); one NUMA node: every page "
                        "is local, locality cannot be an issue\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("Memory accesses"), std::string::npos) << "no access samples, no access heatmap";

    const nlohmann::json j = memory_heatmaps_to_json(maps);
    EXPECT_EQ(j[0]["backends"], nlohmann::json::array({"pagefault", "cpuclock"}));
    EXPECT_EQ(j[0]["samples_by_backend"]["pagefault"], 100);
    EXPECT_EQ(j[0]["samples_by_backend"]["cpuclock"], 17);
    EXPECT_EQ(j[0]["access_backends"], nlohmann::json::array());
    EXPECT_EQ(j[0]["numa_nodes"], 1);
    EXPECT_EQ(j[0]["first_touch"]["unresolved"], 30);
    EXPECT_EQ(j[0]["first_touch"]["locality"], "single_numa_node");
}

TEST(SamplingAnalysis, FirstTouchWithEveryPageUnresolvedSaysSo) {
    TempDir dir;
    const LoadedRun run = one_numa_pagefault_run(dir, 100);
    const std::string text = render_memory_heatmaps(build_memory_heatmaps(run.model));
    EXPECT_NE(text.find("First touch on n01 (pagefault, 100 samples): unresolved 100.0 % (pages freed or unmapped "
                        "before the recorder could look up their NUMA node); one NUMA node: every page is local, "
                        "locality cannot be an issue\n"),
              std::string::npos)
        << text;
}

TEST(SamplingAnalysis, RemoteAccessAndSerialFirstTouchAreWarnedWithTheFix) {
    TwoSocketRun t;
    const RunView view = build_run_view(t.run.model);
    const LauncherInfo launcher = detect_launcher(view);
    const std::vector<Finding> findings = check_numa_locality(view, launcher);
    const Finding* remote = find(findings, "numa-remote-access");
    ASSERT_NE(remote, nullptr);
    EXPECT_EQ(remote->severity, Severity::Warning);
    EXPECT_EQ(remote->node, "n01");
    ASSERT_EQ(remote->flows.size(), 1u);
    EXPECT_EQ(remote->flows[0].tid, 4711);
    EXPECT_EQ(remote->message, "1 of 2 sampled threads get most of their memory from a remote NUMA node (70 % of their DRAM samples)");
    EXPECT_NE(remote->detail.find("thread 4711 (pid 4711): 700 of 1000 DRAM samples remote (node 1)"), std::string::npos)
        << remote->detail;
    for (const char* fix : {"initialise it in parallel", "OMP_PROC_BIND", "OMP_PLACES", "numactl --localalloc",
                            "--membind", "NUMA domains"})
        EXPECT_NE(remote->suggestion.find(fix), std::string::npos) << fix;

    const Finding* serial = find(findings, "numa-serial-first-touch");
    ASSERT_NE(serial, nullptr);
    EXPECT_EQ(serial->flows[0].tid, 4711);
    EXPECT_EQ(serial->message,
              "one thread of pid 4711 first touched 98 % of its sampled pages (they sit on node 0), while its threads "
              "run on NUMA nodes 0,1");
    EXPECT_NE(serial->suggestion.find("Initialise the data in parallel"), std::string::npos);
    EXPECT_EQ(serial->figure("pages"), 920);
}

TEST(SamplingAnalysis, ParallelInitialisationIsNotWarned) {
    TwoSocketRun t(/*parallel_init=*/true);
    const RunView view = build_run_view(t.run.model);
    const auto findings = check_numa_locality(view, detect_launcher(view));
    EXPECT_EQ(find(findings, "numa-serial-first-touch"), nullptr);
}

TEST(SamplingAnalysis, SingleNumaNodesAndRunsWithoutSamplesHaveNoFindings) {
    TempDir dir;
    SyntheticRun r(dir.path());
    r.write_run_json();
    r.add_host("n01", "pack:1 core:4 pu:1");
    r.add_process(busy_process("n01", 50, -1, 2, "0-3"));
    std::string s = summary_header(50) + access(50, 0, "remote_dram", "load", 0, true, 1000, 300) +
                    "{\"v\":1,\"rec\":\"end\",\"threads\":1}\n";
    SyntheticRun::write_file(dir.path() / "n01" / "pid-50.samples.jsonl", s);
    auto loaded = load_run(dir.str());
    ASSERT_TRUE(loaded.ok());
    const RunView view = build_run_view(loaded->model);
    EXPECT_TRUE(check_numa_locality(view, detect_launcher(view)).empty());
    EXPECT_EQ(build_memory_heatmaps(loaded->model).size(), 1u) << "the heatmap is still drawn";

    TwoSocketRun with;  // and a run with no summary at all
    fs::remove(with.dir.path() / "n01" / "pid-4711.samples.jsonl");
    auto plain = load_run(with.dir.str());
    ASSERT_TRUE(plain.ok());
    const RunView v2 = build_run_view(plain->model);
    EXPECT_TRUE(check_numa_locality(v2, detect_launcher(v2)).empty());
    EXPECT_TRUE(build_memory_heatmaps(plain->model).empty());
}

TEST(SamplingAnalysis, TerminalHeatmapShowsEachLevelShadedByPu) {
    TwoSocketRun t;
    const auto maps = build_memory_heatmaps(t.run.model);
    const std::string text = render_memory_heatmaps(maps);
    EXPECT_NE(text.find("Memory accesses on n01 (pebs, 2,200 samples), PUs in topology order (PUs 0..31):"),
              std::string::npos)
        << text;
    // One row per level: share, then 32 cells; PU 0 (first cell) is the row's maximum for remote DRAM.
    const auto row = [&](const std::string& level) {
        const auto at = text.find("  " + level + " ");
        EXPECT_NE(at, std::string::npos) << level << "\n" << text;
        return text.substr(at, text.find('\n', at) - at);
    };
    EXPECT_NE(row("remote_dram").find("31.8 %  |█···"), std::string::npos) << row("remote_dram");
    EXPECT_NE(row("remote_dram").find("mean 350 cycles, 100 % remote"), std::string::npos);
    EXPECT_NE(row("L1").find("17 % stores"), std::string::npos) << row("L1");
    // local DRAM: PU 0 has 300 of the row's maximum 400 (PU 8).
    // (PU 8 is the 17th in topology order: each core lists its two hardware threads, 0 and 16, first.)
    const std::string local = row("local_dram");
    EXPECT_NE(local.find("|▇···············█···"), std::string::npos) << local;
    EXPECT_NE(text.find("First touch on n01 (pagefault, 920 samples): node 0 97.8 %, node 1 2.2 %; every page on the "
                        "touching PU's node\n"),
              std::string::npos)
        << text;
}

TEST(SamplingAnalysis, JsonCarriesEveryCount) {
    TwoSocketRun t;
    const nlohmann::json j = memory_heatmaps_to_json(build_memory_heatmaps(t.run.model));
    ASSERT_EQ(j.size(), 1u);
    EXPECT_EQ(j[0]["host"], "n01");
    EXPECT_EQ(j[0]["pus"].size(), 32u);
    EXPECT_EQ(j[0]["access_samples"], 2200);
    const auto& remote = j[0]["levels"][3];
    EXPECT_EQ(remote["level"], "remote_dram");
    EXPECT_EQ(remote["samples"], 700);
    EXPECT_EQ(remote["per_pu"][0], 700);
    EXPECT_EQ(remote["targets"][0]["type"], "Numa");
    EXPECT_EQ(remote["targets"][0]["os_index"], 1);
    EXPECT_DOUBLE_EQ(remote["mean_latency"].get<double>(), 350.0);
    EXPECT_EQ(j[0]["first_touch"]["per_numa"][1]["samples"], 20);
    EXPECT_EQ(j[0]["first_touch"]["unresolved"], 0);
    EXPECT_EQ(j[0]["first_touch"]["locality"], "local");
    EXPECT_EQ(j[0]["backends"], nlohmann::json::array({"pebs", "pagefault"}));
    EXPECT_EQ(j[0]["access_backends"], nlohmann::json::array({"pebs"}));
    EXPECT_EQ(j[0]["numa_nodes"], 2);
    EXPECT_TRUE(j[0]["levels"][0]["mean_latency"].is_number());
}
