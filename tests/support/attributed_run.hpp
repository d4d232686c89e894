// A loaded run whose memory samples are attributed to call sites and data
// objects of known shape (attributed_summary.hpp), for the pipeline tests
// and the browser test's page (tests/browser/make_attributed_page.cpp).
//
// pid 4711 on the two-socket machine (main thread on PU 0, NUMA node 0; its
// worker on PU 8, node 1): the main thread first touched 92 of the mesh's
// 100 sampled pages in init_mesh, the worker 8 in compute_mesh; the worker
// then read the mesh from node 0 (remote), its stack from node 1 and the
// static table from L1; 50 L1 samples of the main thread have no site.
#pragma once

#include <string>

#include "parsers/memory_access_paths.hpp"
#include "parsers/run_loader.hpp"
#include "tests/support/attributed_summary.hpp"
#include "tests/support/synthetic_run.hpp"

namespace stacksage::test {

inline SampledAccess attributed_access(std::int64_t tid, std::int64_t cpu, const std::string& backend,
                                       const std::string& level, std::int64_t node, bool remote, std::uint64_t count,
                                       std::int64_t site, std::int64_t object) {
    SampledAccess a;
    a.tid = tid;
    a.cpu = cpu;
    a.backend = backend;
    a.level = level;
    a.op = backend == "pagefault" ? "unknown" : "load";
    a.node = node;
    a.remote = remote;
    a.count = count;
    a.site = site;
    a.object = object;
    return a;
}

struct AttributedRun {
    static constexpr std::int64_t kPid = 4711;
    static constexpr std::int64_t kWorker = 4711 * 100 + 1;
    LoadedRun run;
    SampleSummary summary;
    MemoryPathStats stats;

    // Writes the run's directory under dir and loads it; then places the
    // attributed summary in its model, as the loader does with a summary file.
    explicit AttributedRun(const std::filesystem::path& dir) {
        testing::SyntheticRun r(dir);
        r.write_run_json();
        r.copy_topology("n01", std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/32em64t-2n8c2t-pci-normalio.xml");
        testing::SyntheticProcess p = testing::busy_process("n01", kPid, -1, 2, "0");
        p.threads[0].cpuset = "8";
        r.add_process(p);
        auto loaded = load_run(dir.string());
        if (!loaded.ok()) throw std::runtime_error(loaded.error().message);
        run = std::move(loaded.value());

        summary.path = "n01/pid-4711.samples.jsonl";
        summary.pid = kPid;
        add_known_shape(summary, kWorker);
        summary.accesses = {
            attributed_access(kPid, 0, "pagefault", "unknown", 0, false, 92, kSiteInit, kObjectMesh),
            attributed_access(kWorker, 8, "pagefault", "unknown", 1, false, 8, kSiteCompute, kObjectMesh),
            attributed_access(kWorker, 8, "pebs", "remote_dram", 0, true, 600, kSiteCompute, kObjectMesh),
            attributed_access(kWorker, 8, "pebs", "local_dram", 1, false, 100, kSiteCompute, kObjectStack),
            attributed_access(kWorker, 8, "pebs", "L1", -1, false, 300, kSiteCompute, kObjectTable),
            attributed_access(kPid, 0, "pebs", "L1", -1, false, 50, -1, -1),
        };
        Model& m = run.model;
        const ComponentId node = m.components_of_type(ComponentType::Node).front();
        stats = add_sample_summary(m, node, summary, [&](std::int64_t tid) {
            for (ComponentId f : m.components_of_type(ComponentType::Flow))
                if (m.os_index(f) == tid) return f;
            return kNoComponent;
        });
        for (const std::string& n : stats.notes) run.notes.push_back({LoadNote::Level::Info, summary.path, n});
    }
};

}  // namespace stacksage::test
