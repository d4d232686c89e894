// Micro-benchmarks of the model (core/), measured the way sys-sage's figures
// were taken so the two can be compared (see docs/PERFORMANCE.md).
#include <benchmark/benchmark.h>

#include <random>

#include "core/model.hpp"

using namespace stacksage;

namespace {

// A flat tree of n PUs under one root.
Model flat_model(int n) {
    Model m;
    auto root = m.add_component(ComponentType::Topology, kNoComponent);
    for (int i = 0; i < n; ++i) m.add_component(ComponentType::Thread, root, "", "", i);
    return m;
}

void BM_CreateComponent(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    for (auto _ : state) {
        Model m;
        auto root = m.add_component(ComponentType::Topology, kNoComponent);
        for (int i = 0; i < n; ++i) m.add_component(ComponentType::Thread, root, "", "", i);
        benchmark::DoNotOptimize(m.component_count());
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_CreateComponent)->Arg(1000)->Arg(100000);

// The same with the size known in advance (Model::reserve), as a loader has it.
void BM_CreateComponentReserved(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    for (auto _ : state) {
        Model m;
        m.reserve(n + 1);
        auto root = m.add_component(ComponentType::Topology, kNoComponent);
        for (int i = 0; i < n; ++i) m.add_component(ComponentType::Thread, root, "", "", i);
        benchmark::DoNotOptimize(m.component_count());
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_CreateComponentReserved)->Arg(1000)->Arg(100000);

void BM_ListAllComponents(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Model m = flat_model(n);
    for (auto _ : state) {
        std::uint64_t sum = 0;
        m.for_each_component([&](ComponentId id) { sum += index_of(id); });
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * (n + 1));
}
BENCHMARK(BM_ListAllComponents)->Arg(1000)->Arg(100000);

void BM_ListComponentsOfType(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Model m = flat_model(n);
    for (auto _ : state) benchmark::DoNotOptimize(m.components_of_type(ComponentType::Thread).size());
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_ListComponentsOfType)->Arg(100000);

// Deleting a wide subtree: sys-sage needs O(N^2) (15 us per child at 100,000).
void BM_DeleteWideSubtree(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    for (auto _ : state) {
        state.PauseTiming();
        Model m = flat_model(n);
        auto root = m.roots().front();
        state.ResumeTiming();
        m.remove_subtree(root);
        benchmark::DoNotOptimize(m.component_count());
    }
    state.SetItemsProcessed(state.iterations() * (n + 1));
}
BENCHMARK(BM_DeleteWideSubtree)->Arg(1000)->Arg(100000)->Unit(benchmark::kMicrosecond);

// Bytes per component: record, type index and one cpuset attribute each, as
// a hwloc-loaded model has (attribute strings excluded).
void BM_MemoryPerComponent(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const bool with_cpuset = state.range(1) != 0;
    double bytes_per_component = 0;
    for (auto _ : state) {
        Model m = flat_model(n);
        if (with_cpuset)
            m.for_each_component([&](ComponentId id) {
                Cpuset c;
                c.set(static_cast<unsigned>(index_of(id)) % 64);
                m.set_attr(id, keys::cpuset, c);
            });
        bytes_per_component = double(m.memory_bytes_excluding_strings()) / double(m.component_count());
    }
    state.counters["bytes_per_component"] = bytes_per_component;
}
BENCHMARK(BM_MemoryPerComponent)->Args({100000, 0})->Args({100000, 1})->Unit(benchmark::kMillisecond);

// Attribute lookup on cold components. range(0) components carry five
// attributes each; the last one set (a full walk of the list) holds the id of
// the next component of a random cycle, so each lookup depends on the one
// before (no overlap: this is latency, not throughput) and lands on lines
// the previous lookups did not bring in. 1,000 components fit in L1/L2,
// 100,000 (16 MB) in this machine's L3, 1,000,000 (160 MB) only in DRAM.
void BM_AttributeLookupCold(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    Model m = flat_model(n);
    auto k1 = m.key("a1"), k2 = m.key("a2"), k3 = m.key("a3"), k4 = m.key("a4"), next = m.key("next");
    std::vector<std::uint32_t> cycle;
    m.for_each_component([&](ComponentId id) { cycle.push_back(index_of(id)); });
    std::shuffle(cycle.begin(), cycle.end(), std::mt19937(42));
    for (std::size_t i = 0; i < cycle.size(); ++i) {
        ComponentId id{cycle[i]};
        m.set_attr(id, k1, std::int64_t{1});
        m.set_attr(id, k2, 2.0);
        m.set_attr(id, k3, std::int64_t{3});
        m.set_attr(id, k4, std::int64_t{4});
        m.set_attr(id, next, std::int64_t{cycle[(i + 1) % cycle.size()]});
    }
    ComponentId at{cycle[0]};
    for (auto _ : state) {
        at = ComponentId{static_cast<std::uint32_t>(*m.get_int(at, next))};
        benchmark::DoNotOptimize(at);
    }
    state.counters["model_MB"] = double(m.memory_bytes_excluding_strings()) / 1e6;
}
BENCHMARK(BM_AttributeLookupCold)->Arg(1000)->Arg(100000)->Arg(1000000);

// The floor of such a lookup: one dependent random 8-byte read in an array as
// large as the model, no model at all. A lookup costs two of these (the
// component record, then its attribute entries).
void BM_DependentRandomReadFloor(benchmark::State& state) {
    const std::size_t words = static_cast<std::size_t>(state.range(0)) / 8;
    std::vector<std::uint64_t> memory(words);
    std::vector<std::uint64_t> cycle(words);
    for (std::size_t i = 0; i < words; ++i) cycle[i] = i;
    std::shuffle(cycle.begin(), cycle.end(), std::mt19937(42));
    for (std::size_t i = 0; i < words; ++i) memory[cycle[i]] = cycle[(i + 1) % words];
    std::uint64_t at = cycle[0];
    for (auto _ : state) {
        at = memory[at];
        benchmark::DoNotOptimize(at);
    }
}
BENCHMARK(BM_DependentRandomReadFloor)->Arg(160000)->Arg(16000000)->Arg(160000000);

// The DataPaths of one type on a component that has 10,000 of them, among
// `range(0)` DataPaths of other types on the same component.
void BM_FindDataPathsOfType(benchmark::State& state) {
    const int others = static_cast<int>(state.range(0));
    Model m = flat_model(10000 + others);
    auto hub = m.add_component(ComponentType::Flow, kNoComponent);
    std::vector<DataPathType> other_types;
    for (int t = 0; t < 8; ++t) other_types.push_back(m.datapath_type("type" + std::to_string(t)));
    for (int i = 0; i < others; ++i)
        m.add_datapath(hub, ComponentId{static_cast<std::uint32_t>(i + 1)}, other_types[i % 8]);
    for (int i = 0; i < 10000; ++i)
        m.add_datapath(hub, ComponentId{static_cast<std::uint32_t>(i + 1)}, DataPathType::MayRunOn);
    for (auto _ : state) {
        auto range = m.datapaths(hub, DataPathType::MayRunOn, Direction::Out);
        benchmark::DoNotOptimize(range.size());
        benchmark::DoNotOptimize(*range.begin());
    }
}
BENCHMARK(BM_FindDataPathsOfType)->Arg(0)->Arg(100000);

void BM_ReadAllDataPathsOfType(benchmark::State& state) {
    Model m = flat_model(10000);
    auto hub = m.add_component(ComponentType::Flow, kNoComponent);
    for (int i = 0; i < 10000; ++i)
        m.add_datapath(hub, ComponentId{static_cast<std::uint32_t>(i + 1)}, DataPathType::MayRunOn);
    for (auto _ : state) {
        std::uint64_t sum = 0;
        for (auto dp : m.datapaths(hub, DataPathType::MayRunOn, Direction::Out)) sum += index_of(m.target(dp));
        benchmark::DoNotOptimize(sum);
    }
    state.SetItemsProcessed(state.iterations() * 10000);
}
BENCHMARK(BM_ReadAllDataPathsOfType);

}  // namespace

BENCHMARK_MAIN();
