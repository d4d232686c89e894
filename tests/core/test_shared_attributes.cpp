// Shared attribute lists (Model::share_attributes / adopt_attributes): the
// copies of one topology and the paths of one affinity interval read one
// list; a change to any of them is its own (copy on write).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <unistd.h>

#include "core/model.hpp"
#include "core/model_copy.hpp"
#include "core/snapshot.hpp"

using namespace stacksage;

namespace {

std::vector<std::pair<std::string, std::string>> attributes_of(const Model& m, ComponentId id) {
    std::vector<std::pair<std::string, std::string>> out;
    m.for_each_attr(id, [&](AttrKey k, const AttributeValue& v) {
        std::string text;
        if (auto* i = std::get_if<std::int64_t>(&v)) text = std::to_string(*i);
        else if (auto* s = std::get_if<std::string>(&v)) text = *s;
        else if (auto* c = std::get_if<Cpuset>(&v)) text = c->to_list_string();
        out.emplace_back(std::string(m.key_name(k)), text);
    });
    return out;
}

// A node of 2 cores with attributes on each, and a path between them.
struct Template {
    Model m;
    ComponentId node;
    Template() {
        node = m.add_component(ComponentType::Node, kNoComponent, "", "t");
        m.set_attr(node, keys::cpuset, Cpuset::range(0, 1));
        for (int c = 0; c < 2; ++c) {
            const ComponentId core = m.add_component(ComponentType::Core, node, "", "", c);
            m.set_attr(core, keys::cpuset, Cpuset::range(c, c));
            m.set_attr(core, keys::logical_index, std::int64_t{c});
            m.set_attr(core, m.key("hwloc_type"), std::string_view("Core"));
        }
        const DataPathId dp = m.add_datapath(m.first_child(node), m.last_child(node), DataPathType::MayRunOn);
        m.set_attr(dp, keys::start_ns, std::int64_t{5});
    }
};

}  // namespace

TEST(SharedAttributes, AnAdoptedListReadsAsTheOwnersAndAChangeIsOnlyTheChangersOwn) {
    Model m;
    const ComponentId a = m.add_component(ComponentType::Core, kNoComponent, "", "", 0);
    const ComponentId b = m.add_component(ComponentType::Core, kNoComponent, "", "", 1);
    const ComponentId c = m.add_component(ComponentType::Core, kNoComponent, "", "", 2);
    m.set_attr(a, keys::logical_index, std::int64_t{7});
    m.set_attr(a, m.key("hwloc_type"), std::string_view("Core"));
    const Model::SharedAttributes list = m.share_attributes(a);
    m.adopt_attributes(b, list);
    m.adopt_attributes(c, list);
    EXPECT_TRUE(m.has_shared_attributes());
    EXPECT_EQ(attributes_of(m, b), attributes_of(m, a));
    EXPECT_EQ(m.get_int(c, keys::logical_index), 7);

    // Changing, adding to or removing from one leaves the others as they were.
    m.set_attr(b, keys::logical_index, std::int64_t{8});
    m.set_attr(c, keys::end_ns, std::int64_t{3});
    EXPECT_TRUE(m.remove_attr(a, m.key("hwloc_type")));
    EXPECT_EQ(m.get_int(a, keys::logical_index), 7);
    EXPECT_EQ(m.get_int(b, keys::logical_index), 8);
    EXPECT_EQ(m.get_int(c, keys::logical_index), 7);
    EXPECT_FALSE(m.get_string(a, *m.find_key("hwloc_type")));
    EXPECT_EQ(m.get_string(b, *m.find_key("hwloc_type")), "Core");
    EXPECT_EQ(m.get_string(c, *m.find_key("hwloc_type")), "Core");
    EXPECT_FALSE(m.get_int(a, keys::end_ns));
    EXPECT_FALSE(m.get_int(b, keys::end_ns));
    EXPECT_EQ(m.get_int(c, keys::end_ns), 3);
    // Appending to one after another (the loader's pattern) stays each one's.
    m.set_attr(a, keys::start_ns, std::int64_t{1});
    m.set_attr(b, keys::start_ns, std::int64_t{2});
    EXPECT_EQ(m.get_int(a, keys::start_ns), 1);
    EXPECT_EQ(m.get_int(b, keys::start_ns), 2);
    EXPECT_FALSE(m.get_int(c, keys::start_ns));
    EXPECT_TRUE(m.check_consistency().empty());
}

TEST(SharedAttributes, RemovingOneSharerLeavesTheListToTheOthers) {
    Model m;
    const ComponentId root = m.add_component(ComponentType::Node, kNoComponent);
    const ComponentId a = m.add_component(ComponentType::Core, root, "", "", 0);
    const ComponentId b = m.add_component(ComponentType::Core, kNoComponent, "", "", 1);
    m.set_attr(a, keys::logical_index, std::int64_t{4});
    m.adopt_attributes(b, m.share_attributes(a));
    m.remove_subtree(root);
    // The freed slots are reused by new attributes: they must not be b's.
    const ComponentId d = m.add_component(ComponentType::Core, kNoComponent, "", "", 2);
    m.set_attr(d, keys::logical_index, std::int64_t{9});
    m.set_attr(d, keys::end_ns, std::int64_t{9});
    EXPECT_EQ(m.get_int(b, keys::logical_index), 4);
    EXPECT_FALSE(m.get_int(b, keys::end_ns));
}

TEST(SharedAttributes, PathsShareAsComponentsDo) {
    Model m;
    const ComponentId f = m.add_component(ComponentType::Flow, kNoComponent);
    const ComponentId p0 = m.add_component(ComponentType::Thread, kNoComponent, "", "", 0);
    const ComponentId p1 = m.add_component(ComponentType::Thread, kNoComponent, "", "", 1);
    const DataPathId d0 = m.add_datapath(f, p0, DataPathType::MayRunOn);
    const DataPathId d1 = m.add_datapath(f, p1, DataPathType::MayRunOn);
    m.set_attr(d0, keys::start_ns, std::int64_t{10});
    m.set_attr(d0, keys::end_ns, std::int64_t{20});
    m.adopt_attributes(d1, m.share_attributes(d0));
    EXPECT_EQ(m.get_int(d1, keys::end_ns), 20);
    m.set_attr(d1, keys::end_ns, std::int64_t{30});
    EXPECT_EQ(m.get_int(d0, keys::end_ns), 20);
    EXPECT_EQ(m.get_int(d1, keys::end_ns), 30);
    m.remove_datapath(d0);
    EXPECT_EQ(m.get_int(d1, keys::start_ns), 10);
}

TEST(SharedAttributes, CopiesOfOneSubtreeShareTheFirstCopysListsAndStayApart) {
    const Template t;
    Model run;
    const ComponentId root = run.add_component(ComponentType::Topology, kNoComponent);
    SharedSubtreeAttributes shared;
    CopyOptions copy;
    copy.shared = &shared;
    const ComponentId first = import_subtree(run, root, t.m, t.node, copy);
    ASSERT_TRUE(shared.filled);
    EXPECT_EQ(shared.components.size(), 3u);
    EXPECT_EQ(shared.datapaths.size(), 1u);
    const ComponentId second = import_subtree(run, root, t.m, t.node, copy);
    ASSERT_NE(second, kNoComponent);
    // The second copy reads as the template, as an unshared copy would.
    const ComponentId plain = import_subtree(run, root, t.m, t.node);
    for (ComponentId node : {first, second}) {
        EXPECT_EQ(attributes_of(run, node), attributes_of(run, plain));
        for (ComponentId c = run.first_child(node), p = run.first_child(plain); c != kNoComponent;
             c = run.next_sibling(c), p = run.next_sibling(p))
            EXPECT_EQ(attributes_of(run, c), attributes_of(run, p));
        const DataPathId dp = *run.datapaths(run.first_child(node), DataPathType::MayRunOn, Direction::Out).begin();
        EXPECT_EQ(run.get_int(dp, keys::start_ns), 5);
    }
    // Naming one node (what the loader does to each) changes only that one.
    run.set_name(second, "n2");
    run.set_attr(second, keys::hostname, std::string_view("n2"));
    run.set_attr(run.first_child(first), keys::logical_index, std::int64_t{42});
    EXPECT_FALSE(run.get_string(first, keys::hostname));
    EXPECT_EQ(run.get_string(second, keys::hostname), "n2");
    EXPECT_EQ(run.get_int(run.first_child(second), keys::logical_index), 0);
    EXPECT_TRUE(run.check_consistency().empty());
}

TEST(SharedAttributes, AModelWithSharedListsIsNotWrittenAsASnapshot) {
    Model m;
    const ComponentId a = m.add_component(ComponentType::Node, kNoComponent);
    const ComponentId b = m.add_component(ComponentType::Node, kNoComponent);
    m.set_attr(a, keys::logical_index, std::int64_t{1});
    m.adopt_attributes(b, m.share_attributes(a));
    const std::string path = "/tmp/stacksage-shared-attributes-" + std::to_string(::getpid()) + ".snap";
    const Status written = write_snapshot(m, path);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("shares attribute lists"), std::string::npos);
    std::remove(path.c_str());
}
