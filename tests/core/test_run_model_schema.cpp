// The run model's schema (core/run_model_schema.hpp, memory_level.hpp,
// sample_backend.hpp): typed keys, one key table per model, and the
// vocabularies' words.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/attribute_keys.hpp"
#include "core/memory_level.hpp"
#include "core/model.hpp"
#include "core/run_model_schema.hpp"
#include "core/sample_backend.hpp"

using namespace stacksage;

namespace {

// What a typed key allows, checked at compile time.
template <class KeyType>
concept readable_as_string = requires(const Model& m, ComponentId c, KeyType k) { m.get_string(c, k); };
template <class KeyType, class Value>
concept settable_to = requires(Model& m, ComponentId c, KeyType k, Value v) { m.set(c, k, v); };

static_assert(std::is_same_v<decltype(std::declval<const Model&>().get(ComponentId{}, Key<std::int64_t>{})),
                             std::optional<std::int64_t>>);
static_assert(std::is_same_v<decltype(std::declval<const Model&>().get(ComponentId{}, Key<std::string>{})),
                             std::optional<std::string_view>>);
static_assert(std::is_same_v<decltype(std::declval<const Model&>().get(DataPathId{}, Key<Cpuset>{})),
                             std::optional<Cpuset>>);
// An int key is no string key: neither read nor written as one.
static_assert(!readable_as_string<Key<std::int64_t>>);
static_assert(!settable_to<Key<std::int64_t>, std::string_view>);
static_assert(!settable_to<Key<std::string>, std::int64_t>);
static_assert(settable_to<Key<std::int64_t>, int>);
// The fixed keys are typed too, and still the numbers snapshots rely on.
static_assert(std::is_same_v<decltype(std::declval<const Model&>().get(ComponentId{}, keys::cache_level)),
                             std::optional<std::int64_t>>);
static_assert(!settable_to<decltype(keys::cpuset), std::int64_t>);
static_assert(AttrKey{keys::cpuset} == 0 && AttrKey{keys::unit} == 22);

TEST(RunModelSchema, TypedKeysReadAndWriteTheirOwnType) {
    Model m;
    const ComponentId p = m.add_component(ComponentType::Process, kNoComponent, to_string(ProcessKind::Process));
    const RunModelKeys& k = m.intern_run_keys();
    m.set(p, k.pid, 4711);
    m.set(p, k.exe, "/bin/app");
    Cpuset cpus;
    cpus.set(3);
    m.set(p, k.cgroup_cpuset, cpus);
    EXPECT_EQ(m.get(p, k.pid), 4711);
    EXPECT_EQ(m.get(p, k.exe), "/bin/app");
    EXPECT_EQ(m.get(p, k.cgroup_cpuset), cpus);
    EXPECT_TRUE(m.has(p, k.pid));
    EXPECT_FALSE(m.has(p, k.ppid));
    EXPECT_EQ(m.get(p, k.ppid), std::nullopt);
    // The same attributes through their names: the table is the model's own keys.
    EXPECT_EQ(m.get_int(p, *m.find_key(run_keys::pid)), 4711);
    EXPECT_EQ(m.get_string(p, *m.find_key(run_keys::exe)), "/bin/app");
    // And the fixed keys.
    m.set(p, keys::start_ns, 5);
    EXPECT_EQ(m.get(p, keys::start_ns), 5);
    EXPECT_EQ(m.get_int(p, keys::start_ns), 5);
}

TEST(RunModelSchema, EveryNameIsInternedOnceUnderItsOwnName) {
    Model m;
    const RunModelKeys& k = m.intern_run_keys();
    EXPECT_TRUE(k.complete());
    std::set<AttrKey> ids;
    std::set<std::string> names;
    std::size_t entries = 0;
    k.for_each([&](std::string_view name, AttrKey key) {
        ++entries;
        ids.insert(key);
        names.emplace(name);
        EXPECT_EQ(m.key_name(key), name);
        EXPECT_GE(key, keys::names.size()) << name << " must not take a fixed key's number";
    });
    EXPECT_EQ(ids.size(), names.size());
    EXPECT_EQ(entries, names.size());
    EXPECT_EQ(m.datapath_type_name(*k.waited_for), run_keys::waited_for);
    EXPECT_EQ(m.key_name(k.hwloc_host_name.id), "HostName");
    EXPECT_EQ(m.key_name(k.job_restricted.id), "job_restricted");
}

TEST(RunModelSchema, InternedOncePerModel) {
    Model m;
    const RunModelKeys& first = m.intern_run_keys();
    const AttrKey after_first = *m.find_key(memory_access_keys::samples_lost);
    const std::size_t keys_after_first = m.key(std::string("a new key"));  // the next number
    const RunModelKeys& second = m.intern_run_keys();
    EXPECT_EQ(&first, &second);
    EXPECT_EQ(*m.find_key(memory_access_keys::samples_lost), after_first);
    EXPECT_EQ(m.key(std::string("another key")), keys_after_first + 1);  // nothing interned in between
    const Model& read_only = m;
    EXPECT_EQ(&read_only.run_keys(), &first);
}

TEST(RunModelSchema, AModelOnlyReadHasOnlyTheKeysItHolds) {
    Model m;
    const ComponentId f = m.add_component(ComponentType::Flow, kNoComponent, to_string(FlowKind::Main));
    m.set_attr(f, m.key(run_keys::tid), std::int64_t{12});
    const Model& read_only = m;
    const RunModelKeys& k = read_only.run_keys();
    EXPECT_FALSE(k.complete());
    EXPECT_TRUE(k.tid.present());
    EXPECT_FALSE(k.exe.present());
    EXPECT_FALSE(k.waited_for);
    EXPECT_EQ(read_only.get(f, k.tid), 12);
    EXPECT_EQ(read_only.get(f, k.exe), std::nullopt);  // absent: reads as absent
    EXPECT_FALSE(read_only.has(f, k.exe));
    EXPECT_FALSE(read_only.find_key(run_keys::exe)) << "reading interns nothing";

    // A key interned later joins the kept table.
    m.set_attr(f, m.key(run_keys::exe), std::string_view("app"));
    m.datapath_type(run_keys::waited_for);
    EXPECT_EQ(&read_only.run_keys(), &k);
    EXPECT_TRUE(k.exe.present());
    EXPECT_TRUE(k.waited_for);
    EXPECT_EQ(read_only.get(f, k.exe), "app");
}

TEST(RunModelSchema, ACopyHasItsOwnTable) {
    Model m;
    const RunModelKeys& k = m.intern_run_keys();
    const Model copy = m;
    const RunModelKeys& copied = copy.run_keys();
    EXPECT_NE(&copied, &k);
    EXPECT_EQ(copied.pid, k.pid);
    EXPECT_TRUE(copied.complete());
}

TEST(RunModelSchema, ReadersInSeveralThreadsShareOneTable) {
    Model m;
    m.key(run_keys::pid);
    const Model& read_only = m;
    std::vector<const RunModelKeys*> seen(8);
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < seen.size(); ++i)
        threads.emplace_back([&, i] { seen[i] = &read_only.run_keys(); });
    for (auto& t : threads) t.join();
    for (const RunModelKeys* s : seen) EXPECT_EQ(s, seen.front());
    EXPECT_TRUE(seen.front()->pid.present());
}

TEST(RunModelSchema, VocabulariesRoundTripToTheirWords) {
    for (ProcessKind v : {ProcessKind::Process, ProcessKind::Launcher})
        EXPECT_EQ(process_kind_from_string(to_string(v)), v);
    for (FlowKind v : {FlowKind::Main, FlowKind::Thread, FlowKind::Discovered})
        EXPECT_EQ(flow_kind_from_string(to_string(v)), v);
    for (TopologySource v : {TopologySource::Hwloc, TopologySource::CpusetsSeen})
        EXPECT_EQ(topology_source_from_string(to_string(v)), v);
    for (std::size_t i = 0; i < kMemoryLevelCount; ++i) {
        const auto v = static_cast<MemoryLevel>(i);
        EXPECT_EQ(memory_level_from_string(to_string(v)), v) << to_string(v);
    }
    for (std::size_t i = 0; i < kSampleBackendCount; ++i) {
        const auto v = static_cast<SampleBackend>(i);
        EXPECT_EQ(sample_backend_from_string(to_string(v)), v) << to_string(v);
    }
    // The words the recorder, the sampler and the reports use.
    EXPECT_EQ(to_string(ProcessKind::Launcher), "launcher");
    EXPECT_EQ(to_string(FlowKind::Discovered), "discovered");
    EXPECT_EQ(to_string(TopologySource::CpusetsSeen), "cpusets-seen");
    EXPECT_EQ(to_string(MemoryLevel::FillBuffer), "fill_buffer");
    EXPECT_EQ(to_string(MemoryLevel::MemorySideCache), "memory_side_cache");
    EXPECT_EQ(to_string(MemoryLevel::Unknown), "unknown");
    EXPECT_EQ(to_string(SampleBackend::Cpuclock), "cpuclock");
    // Other words are none of them.
    EXPECT_EQ(flow_kind_from_string("Main"), std::nullopt);
    EXPECT_EQ(memory_level_from_string("dram"), std::nullopt);
    EXPECT_EQ(sample_backend_from_string(""), std::nullopt);
    EXPECT_EQ(topology_source_from_string("cpusets"), std::nullopt);
}

TEST(RunModelSchema, CacheLevelsAreTheCoresOwnAndItsPeers) {
    std::vector<std::string_view> caches;
    for (std::size_t i = 0; i < kMemoryLevelCount; ++i)
        if (is_cache_level(static_cast<MemoryLevel>(i))) caches.push_back(to_string(static_cast<MemoryLevel>(i)));
    EXPECT_EQ(caches, (std::vector<std::string_view>{"L1", "fill_buffer", "L2", "L3", "L4", "peer_cache"}));
}

}  // namespace
