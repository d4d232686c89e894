// Which topology each host gets: the snapshot mapped, else topology.xml
// (identical files loaded once), else a node rebuilt from the cpusets seen;
// each fallback noted.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/topology_resolver.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace fs = std::filesystem;

namespace {

ScannedHost host_in(const TempDir& dir, const std::string& name) {
    ScannedHost host;
    host.name = name;
    host.path = dir.path() / name;
    host.has_topology_file = fs::exists(host.path / "topology.xml");
    return host;
}

struct RunModel {
    Model model;
    ComponentId root = model.add_component(ComponentType::Topology, kNoComponent, "run", "out");
    std::vector<LoadNote> notes;
    TopologyResolver resolver{model, root, notes};
};

std::string source_of(const Model& m, ComponentId node) {
    const std::optional<AttrKey> key = m.find_key(run_keys::topology_source);
    if (!key) return {};
    auto v = m.get_string(node, *key);
    return v ? std::string(*v) : std::string();
}

}  // namespace

TEST(TopologyResolver, IdenticalTopologiesAreLoadedOnceAndNamedAfterTheirHost) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:4 pu:2");
    run.add_host("n02", "pack:1 core:4 pu:2");  // the same hardware, another HostName
    run.add_host("n03", "pack:2 core:2 pu:1");
    RunModel r;
    const ComponentId n01 = r.resolver.graft(host_in(dir, "n01"));
    const ComponentId n02 = r.resolver.graft(host_in(dir, "n02"));
    const ComponentId n03 = r.resolver.graft(host_in(dir, "n03"));
    ASSERT_NE(n01, kNoComponent);
    ASSERT_NE(n02, kNoComponent);
    ASSERT_NE(n03, kNoComponent);
    EXPECT_EQ(r.resolver.topologies_loaded(), 2u);
    EXPECT_EQ(r.resolver.snapshots_mapped(), 0u);
    EXPECT_EQ(r.model.name(n02), "n02");
    EXPECT_EQ(r.model.descendants_of_type(n01, ComponentType::Thread).size(), 8u);
    EXPECT_EQ(r.model.descendants_of_type(n03, ComponentType::Thread).size(), 4u);
    EXPECT_EQ(source_of(r.model, n01), "hwloc");
    EXPECT_TRUE(r.notes.empty());
}

TEST(TopologyResolver, TheSnapshotIsMappedBeforeTheXml) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    auto topology = load_hwloc_xml((dir.path() / "n01" / "topology.xml").string());
    ASSERT_TRUE(topology) << topology.error().message;
    ASSERT_TRUE(write_snapshot(*topology, (dir.path() / "n01" / "topology.snap").string()));
    RunModel r;
    const ComponentId node = r.resolver.graft(host_in(dir, "n01"));
    ASSERT_NE(node, kNoComponent);
    EXPECT_EQ(r.resolver.snapshots_mapped(), 1u);
    EXPECT_EQ(r.resolver.topologies_loaded(), 0u);
    EXPECT_EQ(r.model.name(node), "n01");
}

TEST(TopologyResolver, MissingOrBrokenFilesAreNotedAndGiveNoNode) {
    TempDir dir;
    fs::create_directories(dir.path() / "n01");
    RunModel r;
    EXPECT_EQ(r.resolver.graft(host_in(dir, "n01")), kNoComponent);
    ASSERT_EQ(r.notes.size(), 1u);
    EXPECT_EQ(r.notes[0].level, LoadNote::Level::Warning);
    EXPECT_EQ(r.notes[0].file, "n01/topology.xml");

    SyntheticRun run(dir.path());
    run.set_topology_text("n02", "<topology>not hwloc");
    run.set_topology_text("n03", "<topology>not hwloc");
    EXPECT_EQ(r.resolver.graft(host_in(dir, "n02")), kNoComponent);
    EXPECT_EQ(r.resolver.graft(host_in(dir, "n03")), kNoComponent);  // known broken: not loaded again
    EXPECT_EQ(r.resolver.topologies_loaded(), 1u);
    ASSERT_EQ(r.notes.size(), 3u);
    EXPECT_EQ(r.notes[1].level, LoadNote::Level::Error);
    EXPECT_NE(r.notes[2].message.find("as an identical one before"), std::string::npos);

    // A FIFO where the snapshot should be: noted, and the XML read instead.
    run.add_host("n04", "pack:1 core:2 pu:1");
    ASSERT_EQ(::mkfifo((dir.path() / "n04" / "topology.snap").c_str(), 0600), 0);
    EXPECT_NE(r.resolver.graft(host_in(dir, "n04")), kNoComponent);
    ASSERT_EQ(r.notes.size(), 4u);
    EXPECT_EQ(r.notes[3].file, "n04/topology.snap");
}

TEST(TopologyResolver, RebuildsANodeFromTheCpusetsSeen) {
    RunModel r;
    CpusetsSeen seen;
    ProcessImage image;
    image.cgroup_cpuset = Cpuset::range(0, 5);
    image.online_cpus = Cpuset::range(0, 7);
    ThreadRecord t;
    MaskChange start;
    start.cpuset = Cpuset::range(0, 1);
    t.masks.push_back(start);
    image.threads.push_back(t);
    seen.add(image);
    const ComponentId node = r.resolver.rebuild_from_cpusets("n07", seen);
    ASSERT_NE(node, kNoComponent);
    EXPECT_EQ(r.model.name(node), "n07");
    EXPECT_EQ(r.model.descendants_of_type(node, ComponentType::Thread).size(), 6u);
    EXPECT_EQ(source_of(r.model, node), "cpusets-seen");
    EXPECT_EQ(r.model.get_int(node, *r.model.find_key(kJobRestrictedKey)), 1);
}
