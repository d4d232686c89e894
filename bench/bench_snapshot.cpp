// Snapshots against hwloc, side by side in one run (docs/PERFORMANCE.md):
// opening a snapshot and answering a first query, against loading the same
// topology's XML with hwloc alone and with our loader; writing a snapshot
// and importing a subtree, per component.
#include <benchmark/benchmark.h>
#include <hwloc.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "core/model_copy.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"

using namespace stacksage;
namespace fs = std::filesystem;

namespace {

const std::string kSapphireRapids =
    std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/Intel-SapphireRapids-2xXeonMax9460.xml";

std::string snapshot_path() {
    // Never destroyed: the exit handler that removes the file runs after the
    // destructors of statics made before it was registered.
    static const std::string* path = [] {
        auto* p = new std::string(
            (fs::temp_directory_path() / ("stacksage-bench-" + std::to_string(getpid()) + ".snap")).string());
        auto model = load_hwloc_xml(kSapphireRapids);
        if (!model || !write_snapshot(*model, *p)) std::abort();
        std::atexit([] {
            std::error_code ignored;
            fs::remove(*path, ignored);
        });
        return p;
    }();
    return *path;
}

void BM_OpenSnapshotAndFirstQuery(benchmark::State& state) {
    const std::string path = snapshot_path();
    for (auto _ : state) {
        auto model = open_snapshot(path);
        auto pu = model->find(ComponentType::Thread, 159);
        benchmark::DoNotOptimize(model->cpuset(model->parent(pu)).count());
    }
}
BENCHMARK(BM_OpenSnapshotAndFirstQuery)->Unit(benchmark::kMicrosecond);

void BM_HwlocLoadXml(benchmark::State& state) {
    for (auto _ : state) {
        hwloc_topology_t t;
        hwloc_topology_init(&t);
        hwloc_topology_set_xml(t, kSapphireRapids.c_str());
        hwloc_topology_load(t);
        benchmark::DoNotOptimize(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PU));
        hwloc_topology_destroy(t);
    }
}
BENCHMARK(BM_HwlocLoadXml)->Unit(benchmark::kMicrosecond);

void BM_StacksageLoadXml(benchmark::State& state) {
    for (auto _ : state) {
        auto model = load_hwloc_xml(kSapphireRapids);
        benchmark::DoNotOptimize(model->component_count());
    }
}
BENCHMARK(BM_StacksageLoadXml)->Unit(benchmark::kMicrosecond);

void BM_WriteSnapshotFile(benchmark::State& state) {
    auto model = load_hwloc_xml(kSapphireRapids);
    const auto path = snapshot_path() + ".w";
    for (auto _ : state) {
        if (!write_snapshot(*model, path)) state.SkipWithError("write failed");
    }
    fs::remove(path);
    state.counters["seconds_per_component"] =
        benchmark::Counter(double(model->component_count()) * double(state.iterations()),
                           benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_WriteSnapshotFile)->Unit(benchmark::kMicrosecond);

void BM_ImportSubtree(benchmark::State& state) {
    auto model = load_hwloc_xml(kSapphireRapids);
    auto node = model->components_of_type(ComponentType::Node).front();
    const double n = double(model->subtree_size(node));
    for (auto _ : state) {
        Model run;
        auto root = run.add_component(ComponentType::Topology, kNoComponent);
        benchmark::DoNotOptimize(import_subtree(run, root, *model, node));
    }
    state.counters["seconds_per_component"] =
        benchmark::Counter(n * double(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ImportSubtree)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
