// Domain tags, lowest common ancestors and hop distances on a hand-built model.
#include <gtest/gtest.h>

#include "core/locality.hpp"
#include "core/model.hpp"

namespace stacksage {
namespace {

// Topology
// └─ Node
//    ├─ Chip(package) P#0
//    │  ├─ Core P#0 ─ Thread P#0, Thread P#1
//    │  └─ Core P#1 ─ Thread P#2, Thread P#3
//    └─ Chip(package) P#1
//       └─ Core P#2 ─ Thread P#4
// Process (a second root) ─ Flow
struct TwoPackages : ::testing::Test {
    Model m;
    ComponentId topo, node, pkg0, core0, pu0, pu1, core1, pu2, pu3, pkg1, core2, pu4, process, flow;

    void SetUp() override {
        topo = m.add_component(ComponentType::Topology, kNoComponent);
        node = m.add_component(ComponentType::Node, topo, {}, "n01", 0);
        pkg0 = m.add_component(ComponentType::Chip, node, "package", {}, 0);
        core0 = m.add_component(ComponentType::Core, pkg0, {}, {}, 0);
        pu0 = m.add_component(ComponentType::Thread, core0, {}, {}, 0);
        pu1 = m.add_component(ComponentType::Thread, core0, {}, {}, 1);
        core1 = m.add_component(ComponentType::Core, pkg0, {}, {}, 1);
        pu2 = m.add_component(ComponentType::Thread, core1, {}, {}, 2);
        pu3 = m.add_component(ComponentType::Thread, core1, {}, {}, 3);
        pkg1 = m.add_component(ComponentType::Chip, node, "package", {}, 1);
        core2 = m.add_component(ComponentType::Core, pkg1, {}, {}, 2);
        pu4 = m.add_component(ComponentType::Thread, core2, {}, {}, 4);
        process = m.add_component(ComponentType::Process, kNoComponent, {}, "rank 0", 4711);
        flow = m.add_component(ComponentType::Flow, process, {}, "main", 4711);
    }
};

TEST_F(TwoPackages, DomainTagsFollowChildPositions) {
    EXPECT_EQ(domain_tag(m, topo), "0");
    EXPECT_EQ(domain_tag(m, node), "0.0");
    EXPECT_EQ(domain_tag(m, pkg0), "0.0.0");
    EXPECT_EQ(domain_tag(m, pkg1), "0.0.1");
    EXPECT_EQ(domain_tag(m, pu0), "0.0.0.0.0");
    EXPECT_EQ(domain_tag(m, pu1), "0.0.0.0.1");
    EXPECT_EQ(domain_tag(m, pu3), "0.0.0.1.1");
    EXPECT_EQ(domain_tag(m, pu4), "0.0.1.0.0");
}

TEST_F(TwoPackages, SecondRootIsNumberedAmongRoots) {
    EXPECT_EQ(domain_tag(m, process), "1");
    EXPECT_EQ(domain_tag(m, flow), "1.0");
}

TEST_F(TwoPackages, FindByTagInvertsDomainTag) {
    m.for_each_component([&](ComponentId id) {
        EXPECT_EQ(find_by_domain_tag(m, domain_tag(m, id)), id) << domain_tag(m, id);
    });
}

TEST_F(TwoPackages, MalformedOrMissingTagsFindNothing) {
    for (const char* tag : {"", ".", "0.", ".0", "0..1", "a", "0.x", "-1", "+0", " 0", "0 ",
                            "0.01", "00", "0,0", "99999999999999999999999999",
                            "2", "0.1", "0.0.2", "0.0.0.0.0.0", "1.1"})
        EXPECT_EQ(find_by_domain_tag(m, tag), kNoComponent) << '"' << tag << '"';
}

TEST_F(TwoPackages, DeadComponentsHaveNoTag) {
    m.remove_subtree(core0);
    EXPECT_EQ(domain_tag(m, core0), "");
    EXPECT_EQ(domain_tag(m, pu0), "");
    EXPECT_EQ(domain_tag(m, ComponentId{9999}), "");
    // Tags name positions: the next sibling moves up into the freed place.
    EXPECT_EQ(domain_tag(m, core1), "0.0.0.0");
    EXPECT_EQ(find_by_domain_tag(m, "0.0.0.0.1"), pu3);
}

TEST_F(TwoPackages, TagsFollowMoves) {
    ASSERT_TRUE(m.move(core2, pkg0));
    EXPECT_EQ(domain_tag(m, core2), "0.0.0.2");
    EXPECT_EQ(domain_tag(m, pu4), "0.0.0.2.0");
    EXPECT_EQ(find_by_domain_tag(m, "0.0.0.2.0"), pu4);
}

TEST_F(TwoPackages, LowestCommonAncestor) {
    EXPECT_EQ(lowest_common_ancestor(m, pu0, pu1), core0);   // siblings
    EXPECT_EQ(lowest_common_ancestor(m, pu0, pu3), pkg0);    // cousins
    EXPECT_EQ(lowest_common_ancestor(m, pu0, pu4), node);    // different packages
    EXPECT_EQ(lowest_common_ancestor(m, pu2, pkg0), pkg0);   // one is the ancestor
    EXPECT_EQ(lowest_common_ancestor(m, pkg0, pu2), pkg0);
    EXPECT_EQ(lowest_common_ancestor(m, pu2, pu2), pu2);
    EXPECT_EQ(lowest_common_ancestor(m, topo, pu4), topo);
}

TEST_F(TwoPackages, NoCommonAncestorAcrossTrees) {
    EXPECT_EQ(lowest_common_ancestor(m, pu0, flow), kNoComponent);
    EXPECT_EQ(lowest_common_ancestor(m, topo, process), kNoComponent);
    m.remove_subtree(core2);
    EXPECT_EQ(lowest_common_ancestor(m, pu0, pu4), kNoComponent);  // dead
    EXPECT_EQ(lowest_common_ancestor(m, pu0, ComponentId{9999}), kNoComponent);
    EXPECT_EQ(lowest_common_ancestor(m, kNoComponent, pu0), kNoComponent);
}

TEST_F(TwoPackages, HopDistance) {
    EXPECT_EQ(hop_distance(m, pu0, pu0), 0);
    EXPECT_EQ(hop_distance(m, pu0, core0), 1);
    EXPECT_EQ(hop_distance(m, pu0, pu1), 2);   // sibling PUs
    EXPECT_EQ(hop_distance(m, pu0, pkg0), 2);  // PU to its package
    EXPECT_EQ(hop_distance(m, pkg0, pu0), 2);
    EXPECT_EQ(hop_distance(m, pu0, pu3), 4);   // same package, other core
    EXPECT_EQ(hop_distance(m, pu0, pu4), 6);   // other package
    EXPECT_EQ(hop_distance(m, pu4, topo), 4);
    EXPECT_EQ(hop_distance(m, process, flow), 1);
}

TEST_F(TwoPackages, HopDistanceIsMinusOneWhenUnconnected) {
    EXPECT_EQ(hop_distance(m, pu0, flow), -1);
    EXPECT_EQ(hop_distance(m, topo, process), -1);
    EXPECT_EQ(hop_distance(m, pu0, ComponentId{9999}), -1);
    m.remove_subtree(pkg1);
    EXPECT_EQ(hop_distance(m, pu0, pu4), -1);
}

TEST(Locality, EmptyModel) {
    Model m;
    EXPECT_EQ(find_by_domain_tag(m, "0"), kNoComponent);
    EXPECT_EQ(domain_tag(m, ComponentId{0}), "");
    EXPECT_EQ(hop_distance(m, ComponentId{0}, ComponentId{0}), -1);
}

}  // namespace
}  // namespace stacksage
