// hwloc XML -> model, per component, beside hwloc's own load of the same file
// in the same run (see docs/PERFORMANCE.md).
//
// For each real XML with at least 100 components:
//   hwloc_only/<file>  : hwloc_topology_init + set_xml + load + destroy, with
//                        the type filters load_hwloc_xml sets
//   stacksage/<file>   : load_hwloc_xml (the same hwloc load plus conversion)
// and, to show where our part of the time goes:
//   checks/<file>      : check_hwloc_xml_text alone (what runs before hwloc)
//   convert/<file>     : add_hwloc_topology alone, from an hwloc topology
//                        loaded once (our conversion into the model)
//   paired/<file>      : hwloc alone and load_hwloc_xml alternately, each
//                        timed, so both see the same moments of a noisy
//                        machine; reports the ratio of their medians
// All report seconds_per_component (time / components of our model).
#include <benchmark/benchmark.h>
#include <hwloc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "parsers/hwloc_convert.hpp"
#include "parsers/hwloc_loader.hpp"

using namespace stacksage;
namespace fs = std::filesystem;

namespace {

// Time per component: the counters every row reports.
void report_per_component(benchmark::State& state, double components) {
    state.counters["components"] = components;
    state.counters["seconds_per_component"] = benchmark::Counter(
        components * double(state.iterations()), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void hwloc_only(benchmark::State& state, std::string path, double components) {
    for (auto _ : state) {
        hwloc_topology_t t;
        hwloc_topology_init(&t);
        // The filters load_hwloc_xml sets: hwloc's defaults would drop the
        // instruction caches (40-48 objects in some of these files) and so
        // do less work than hwloc does for us.
        hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
        hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_xml(t, path.c_str());
        hwloc_topology_load(t);
        benchmark::DoNotOptimize(hwloc_topology_get_depth(t));
        hwloc_topology_destroy(t);
    }
    report_per_component(state, components);
}

void load_with_hwloc_alone(const std::string& path) {
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_xml(t, path.c_str());
    hwloc_topology_load(t);
    benchmark::DoNotOptimize(hwloc_topology_get_depth(t));
    hwloc_topology_destroy(t);
}

double median_of(std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

// One iteration: a load by hwloc alone and one by load_hwloc_xml, in
// alternating order. Rows run one after the other see different moments of
// a shared machine (a row moves by up to 7% between runs); pairs do not.
void paired(benchmark::State& state, std::string path, double components) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> alone, ours;
    bool ours_first = false;
    for (auto _ : state) {
        for (int k = 0; k < 2; ++k) {
            const bool run_ours = (k == 0) == ours_first;
            const auto start = Clock::now();
            if (run_ours) {
                auto model = load_hwloc_xml(path);
                benchmark::DoNotOptimize(model.ok());
            } else {
                load_with_hwloc_alone(path);
            }
            const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
            (run_ours ? ours : alone).push_back(ns);
        }
        ours_first = !ours_first;
    }
    const double alone_ns = median_of(alone), ours_ns = median_of(ours);
    state.counters["components"] = components;
    state.counters["hwloc_alone_us_per_component"] = alone_ns / components / 1000;
    state.counters["stacksage_us_per_component"] = ours_ns / components / 1000;
    state.counters["ratio"] = alone_ns > 0 ? ours_ns / alone_ns : 0;
}

void stacksage_load(benchmark::State& state, std::string path, double components) {
    for (auto _ : state) {
        auto model = load_hwloc_xml(path);
        benchmark::DoNotOptimize(model.ok());
    }
    report_per_component(state, components);
}

void checks_only(benchmark::State& state, std::string path, double components) {
    std::ifstream in(path, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    for (auto _ : state) {
        Status ok = check_hwloc_xml_text(text, path);
        if (!ok) state.SkipWithError(ok.error().message.c_str());
        benchmark::DoNotOptimize(ok);
    }
    report_per_component(state, components);
}

void convert_only(benchmark::State& state, std::string path, double components) {
    // Loaded as load_hwloc_xml loads it: every type kept, no I/O.
    hwloc_topology_t t;
    hwloc_topology_init(&t);
    hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_xml(t, path.c_str());
    hwloc_topology_load(t);
    for (auto _ : state) {
        Model model;
        const ComponentId root = model.add_component(ComponentType::Topology, kNoComponent);
        auto node = add_hwloc_topology(model, t, root, {});
        if (!node) state.SkipWithError(node.error().message.c_str());
        benchmark::DoNotOptimize(model.component_count());
    }
    hwloc_topology_destroy(t);
    report_per_component(state, components);
}

}  // namespace

int main(int argc, char** argv) {
    // The built-in XML reader, for hwloc alone and for us alike.
    setenv("HWLOC_LIBXML_IMPORT", "0", 0);
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(fs::path(STACKSAGE_TEST_DATA_DIR) / "hwloc-xml"))
        if (e.path().extension() == ".xml") files.push_back(e.path());
    // One large node XML of each cluster.
    for (const char* f : {"network/hwloc-netloc-plafrim/hwloc/mirage001.xml",
                          "network/hwloc-netloc-avakas/hwloc/bigmem01.xml"})
        if (fs::exists(fs::path(STACKSAGE_TEST_DATA_DIR) / f)) files.push_back(fs::path(STACKSAGE_TEST_DATA_DIR) / f);
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
        auto model = load_hwloc_xml(f.string());
        if (!model || model->component_count() < 100) continue;
        double n = double(model->component_count());
        std::string name = f.filename().string();
        benchmark::RegisterBenchmark(("hwloc_only/" + name).c_str(), hwloc_only, f.string(), n)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("stacksage/" + name).c_str(), stacksage_load, f.string(), n)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("checks/" + name).c_str(), checks_only, f.string(), n)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("convert/" + name).c_str(), convert_only, f.string(), n)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark(("paired/" + name).c_str(), paired, f.string(), n)
            ->Unit(benchmark::kMicrosecond);
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
}
