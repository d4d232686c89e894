#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/model.hpp"

using namespace stacksage;

namespace {
// A small machine: Topology / Node / 2 packages / 2 cores each / 2 PUs each,
// with an L2 above each core and a NUMA node per package.
struct SmallMachine {
    Model m;
    ComponentId topo, node;
    std::vector<ComponentId> packages, numas, cores, pus;
    SmallMachine() {
        topo = m.add_component(ComponentType::Topology, kNoComponent);
        node = m.add_component(ComponentType::Node, topo, "", "n01");
        int pu = 0;
        for (int p = 0; p < 2; ++p) {
            auto pkg = m.add_component(ComponentType::Chip, node, "package", "", p);
            packages.push_back(pkg);
            numas.push_back(m.add_component(ComponentType::Numa, pkg, "DRAM", "", p));
            for (int c = 0; c < 2; ++c) {
                auto l2 = m.add_component(ComponentType::Cache, pkg, "L2");
                m.set_attr(l2, keys::cache_level, std::int64_t{2});
                auto core = m.add_component(ComponentType::Core, l2, "", "", p * 2 + c);
                cores.push_back(core);
                for (int t = 0; t < 2; ++t) pus.push_back(m.add_component(ComponentType::Thread, core, "", "", pu++));
            }
        }
    }
};
}  // namespace

TEST(Model, BuildsATreeWithParentsChildrenAndDepths) {
    SmallMachine s;
    auto& m = s.m;
    EXPECT_EQ(m.component_count(), 2u + 2 + 2 + 4 + 4 + 8);
    EXPECT_EQ(m.count_of_type(ComponentType::Thread), 8u);
    EXPECT_EQ(m.parent(s.node), s.topo);
    EXPECT_EQ(m.parent(s.topo), kNoComponent);
    EXPECT_EQ(m.children(s.packages[0]).size(), 3u);  // NUMA + 2 L2
    EXPECT_EQ(m.child_count(s.node), 2u);
    EXPECT_EQ(m.depth(s.pus[0]), 5);
    EXPECT_EQ(m.ancestor_of_type(s.pus[5], ComponentType::Chip), s.packages[1]);
    EXPECT_EQ(m.ancestor_of_type(s.pus[5], ComponentType::Numa), kNoComponent);
    EXPECT_EQ(m.descendants_of_type(s.packages[1], ComponentType::Thread).size(), 4u);
    EXPECT_EQ(m.descendants_of_type(s.topo, ComponentType::Core), s.cores);
    EXPECT_EQ(m.subtree_size(s.packages[0]), 1u + 1 + 2 + 2 + 4);
    EXPECT_EQ(m.kind(s.packages[0]), "package");
    EXPECT_EQ(m.name(s.node), "n01");
    EXPECT_EQ(m.os_index(s.pus[7]), 7);
    EXPECT_EQ(m.roots(), std::vector<ComponentId>{s.topo});
    EXPECT_TRUE(m.check_consistency().empty());
}

TEST(Model, FindsByTypeAndIndexWithinSubtrees) {
    SmallMachine s;
    EXPECT_EQ(s.m.find(ComponentType::Thread, 6), s.pus[6]);
    EXPECT_EQ(s.m.find(ComponentType::Thread, 6, s.packages[1]), s.pus[6]);
    EXPECT_EQ(s.m.find(ComponentType::Thread, 6, s.packages[0]), kNoComponent);
    EXPECT_EQ(s.m.find(ComponentType::Numa, 1), s.numas[1]);
    EXPECT_EQ(s.m.find(ComponentType::Thread, 99), kNoComponent);
}

TEST(Model, WalksSubtreesDepthFirstWithDepths) {
    SmallMachine s;
    std::vector<std::pair<ComponentId, int>> seen;
    s.m.walk_subtree(s.cores[0], [&](ComponentId id, int d) { seen.emplace_back(id, d); });
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0], std::make_pair(s.cores[0], 0));
    EXPECT_EQ(seen[1], std::make_pair(s.pus[0], 1));
    EXPECT_EQ(seen[2], std::make_pair(s.pus[1], 1));
}

TEST(Model, MovesSubtreesAndRefusesCycles) {
    SmallMachine s;
    auto& m = s.m;
    EXPECT_FALSE(m.move(s.packages[0], s.pus[0]));  // under its own descendant
    EXPECT_FALSE(m.move(s.packages[0], s.packages[0]));
    EXPECT_TRUE(m.move(s.cores[0], s.packages[1]));
    EXPECT_EQ(m.ancestor_of_type(s.pus[0], ComponentType::Chip), s.packages[1]);
    EXPECT_EQ(m.last_child(s.packages[1]), s.cores[0]);
    EXPECT_TRUE(m.move_before(s.cores[0], s.packages[1], m.first_child(s.packages[1])));
    EXPECT_EQ(m.first_child(s.packages[1]), s.cores[0]);
    EXPECT_TRUE(m.move(s.cores[0], kNoComponent));  // detach: becomes a root
    EXPECT_EQ(m.roots().size(), 2u);
    EXPECT_TRUE(m.check_consistency().empty());
}

TEST(Model, RemovesSubtreesWithTheirAttributesAndDataPaths) {
    SmallMachine s;
    auto& m = s.m;
    auto flow = m.add_component(ComponentType::Flow, kNoComponent, "", "worker");
    auto dp = m.add_datapath(flow, s.pus[0], DataPathType::MayRunOn);
    auto dp2 = m.add_datapath(flow, s.pus[4], DataPathType::MayRunOn);
    m.set_attr(dp, keys::start_ns, std::int64_t{5});
    const auto before = m.component_count();
    m.remove_subtree(s.packages[0]);
    EXPECT_EQ(m.component_count(), before - 10);
    EXPECT_FALSE(m.is_alive(s.pus[0]));
    EXPECT_FALSE(m.is_alive(dp));
    EXPECT_TRUE(m.is_alive(dp2));
    EXPECT_EQ(m.datapath_count(), 1u);
    EXPECT_EQ(m.datapaths(flow, DataPathType::MayRunOn, Direction::Out).size(), 1u);
    EXPECT_EQ(*m.datapaths(flow, DataPathType::MayRunOn, Direction::Out).begin(), dp2);
    EXPECT_EQ(m.count_of_type(ComponentType::Thread), 4u);
    EXPECT_EQ(m.children(s.node), std::vector<ComponentId>{s.packages[1]});
    EXPECT_EQ(m.find(ComponentType::Thread, 0), kNoComponent);
    EXPECT_TRUE(m.check_consistency().empty());
    // Removed ids are not reused.
    auto fresh = m.add_component(ComponentType::Generic, s.node);
    EXPECT_GT(index_of(fresh), index_of(s.pus.back()));
}

TEST(Model, ThreadCountIncludesOnlyLiveComponents) {
    SmallMachine s;
    s.m.remove_subtree(s.cores[3]);
    EXPECT_EQ(s.m.count_of_type(ComponentType::Thread), 6u);
    EXPECT_EQ(s.m.components_of_type(ComponentType::Core).size(), 3u);
}

TEST(Model, TypedAttributesOnComponentsAndDataPaths) {
    SmallMachine s;
    auto& m = s.m;
    auto c = s.cores[0];
    auto user_key = m.key("frequency_mhz");
    EXPECT_EQ(m.key("frequency_mhz"), user_key);  // interned
    EXPECT_EQ(m.key_name(user_key), "frequency_mhz");
    EXPECT_EQ(m.key("cpuset"), keys::cpuset);       // well-known keys are fixed
    m.set_attr(c, user_key, 2400.5);
    m.set_attr(c, keys::core_type, std::string_view("IntelCore"));
    m.set_attr(c, keys::cpuset, *Cpuset::parse_list("0-1"));
    m.set_attr(c, keys::logical_index, std::int64_t{0});
    EXPECT_DOUBLE_EQ(*m.get_float(c, user_key), 2400.5);
    EXPECT_EQ(*m.get_string(c, keys::core_type), "IntelCore");
    EXPECT_EQ(m.cpuset(c).to_list_string(), "0-1");
    EXPECT_EQ(*m.get_int(c, keys::logical_index), 0);
    // Wrong kind or missing: nullopt, never garbage.
    EXPECT_FALSE(m.get_int(c, user_key));
    EXPECT_FALSE(m.get_string(s.cores[1], keys::core_type));
    // Overwrite changes kind and value in place, keeping insertion order.
    m.set_attr(c, user_key, std::int64_t{7});
    EXPECT_EQ(*m.get_int(c, user_key), 7);
    std::vector<std::string> order;
    m.for_each_attr(c, [&](AttrKey k, const AttributeValue&) { order.emplace_back(m.key_name(k)); });
    EXPECT_EQ(order, (std::vector<std::string>{"frequency_mhz", "core_type", "cpuset", "logical_index"}));
    EXPECT_TRUE(m.remove_attr(c, keys::core_type));
    EXPECT_FALSE(m.remove_attr(c, keys::core_type));
    EXPECT_FALSE(m.has_attr(c, keys::core_type));
    // DataPath attributes.
    auto dp = m.add_datapath(s.pus[0], s.numas[0], DataPathType::MemoryAccess);
    m.set_attr(dp, keys::count, std::int64_t{42});
    m.set_attr(dp, m.key("note"), AttributeValue{std::string("local")});
    EXPECT_EQ(*m.get_int(dp, keys::count), 42);
    EXPECT_EQ(*m.get_string(dp, m.key("note")), "local");
    EXPECT_EQ(std::get<std::string>(*m.get_attr(dp, m.key("note"))), "local");
}

// Attributes set, overwritten and removed in any order on many components
// and DataPaths, with keys below and above 64 (the model remembers which
// small keys the list it last appended to holds, to skip walking it): the
// model must always agree with a plain map per owner, in insertion order.
TEST(Model, AttributesAgreeWithAReferenceUnderRandomChanges) {
    Model m;
    const ComponentId root = m.add_component(ComponentType::Topology, kNoComponent);
    std::vector<ComponentId> comps;
    for (int i = 0; i < 6; ++i) comps.push_back(m.add_component(ComponentType::Core, root));
    std::vector<AttrKey> keys;
    for (int i = 0; i < 90; ++i) keys.push_back(m.key("k" + std::to_string(i)));  // ids up to ~113
    ASSERT_GT(keys.back(), 64u);
    std::vector<DataPathId> paths = {m.add_datapath(comps[0], comps[1], DataPathType::MemoryAccess),
                                     m.add_datapath(comps[2], comps[3], DataPathType::MemoryAccess)};
    // Owners 0-5: components, 6-7: DataPaths. Reference: (key, value) in order.
    std::vector<std::vector<std::pair<AttrKey, std::int64_t>>> ref(8);
    std::uint64_t state = 12345;
    auto next = [&](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    };
    auto set = [&](std::size_t owner, AttrKey k, std::int64_t v) {
        if (owner < 6) m.set_attr(comps[owner], k, v);
        else m.set_attr(paths[owner - 6], k, v);
        auto& r = ref[owner];
        auto it = std::find_if(r.begin(), r.end(), [&](auto& e) { return e.first == k; });
        if (it != r.end()) it->second = v;
        else r.emplace_back(k, v);
    };
    auto remove = [&](std::size_t owner, AttrKey k) {
        const bool removed = owner < 6 ? m.remove_attr(comps[owner], k) : m.remove_attr(paths[owner - 6], k);
        auto& r = ref[owner];
        auto it = std::find_if(r.begin(), r.end(), [&](auto& e) { return e.first == k; });
        EXPECT_EQ(removed, it != r.end());
        if (it != r.end()) r.erase(it);
    };
    for (int step = 0; step < 20000; ++step) {
        const std::size_t owner = next(8);
        // Mostly small keys, so that the remembered list is used and hit.
        const AttrKey k = next(4) ? keys[next(20)] : keys[next(keys.size())];
        const std::uint64_t op = next(10);
        if (op < 7) {
            set(owner, k, static_cast<std::int64_t>(step));
            // Runs of sets on one owner, as loaders make them.
            for (std::uint64_t run = next(4); run > 0; --run) set(owner, keys[next(30)], step);
        } else if (op < 9) {
            remove(owner, k);
        } else if (owner == 5) {
            // Delete a component with its attributes and make a new one.
            m.remove_subtree(comps[5]);
            comps[5] = m.add_component(ComponentType::Core, root);
            ref[5].clear();
        }
        if (step % 97 == 0 || step == 19999) {
            for (std::size_t o = 0; o < 8; ++o) {
                std::vector<std::pair<AttrKey, std::int64_t>> got;
                auto collect = [&](AttrKey key, const AttributeValue& v) { got.emplace_back(key, std::get<std::int64_t>(v)); };
                if (o < 6) m.for_each_attr(comps[o], collect);
                else m.for_each_attr(paths[o - 6], collect);
                ASSERT_EQ(got, ref[o]) << "owner " << o << " after step " << step;
            }
            ASSERT_TRUE(m.check_consistency().empty());
        }
    }
}

// Keys and kinds interned in any order, many of them alike in size and ends
// (the model remembers recent ones by those): one id per string, always.
TEST(Model, InterningGivesOneIdPerStringWhateverTheOrder) {
    Model m;
    std::vector<std::string> names;
    for (int i = 0; i < 300; ++i) names.push_back("k" + std::to_string(1000 + i) + "x");  // same size and ends
    names.push_back("a");
    names.push_back("ab");
    std::vector<AttrKey> ids;
    for (const auto& n : names) ids.push_back(m.key(n));
    std::uint64_t state = 7;
    for (int round = 0; round < 20000; ++round) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const std::size_t i = (state >> 33) % names.size();
        ASSERT_EQ(m.key(names[i]), ids[i]) << names[i];
        ASSERT_EQ(m.key_name(ids[i]), names[i]);
        // Kinds go through the same kind of table.
        const ComponentId c = m.add_component(ComponentType::Generic, kNoComponent, names[i]);
        ASSERT_EQ(m.kind(c), names[i]);
        m.remove_subtree(c);
    }
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

TEST(Model, DataPathsByTypeAndDirection) {
    SmallMachine s;
    auto& m = s.m;
    auto flow = m.add_component(ComponentType::Flow, kNoComponent);
    auto mine = m.datapath_type("my-link");
    EXPECT_GE(static_cast<std::uint32_t>(mine), kFirstUserDataPathType);
    EXPECT_EQ(m.datapath_type("my-link"), mine);
    EXPECT_EQ(m.datapath_type_name(mine), "my-link");
    EXPECT_EQ(m.datapath_type("MayRunOn"), DataPathType::MayRunOn);
    EXPECT_EQ(m.datapath_type_name(DataPathType::RanOn), "RanOn");
    EXPECT_FALSE(m.find_datapath_type("nope"));
    for (auto pu : s.pus) m.add_datapath(flow, pu, DataPathType::MayRunOn);
    m.add_datapath(flow, s.pus[0], DataPathType::RanOn);
    auto sym = m.add_datapath(s.numas[0], s.numas[1], DataPathType::NumaDistance, false, Model::kUnknown, 21.0);
    m.add_datapath(s.numas[0], s.numas[1], mine);
    EXPECT_EQ(m.datapaths(flow, DataPathType::MayRunOn, Direction::Out).size(), 8u);
    EXPECT_EQ(m.datapaths(flow, DataPathType::RanOn, Direction::Out).size(), 1u);
    EXPECT_EQ(m.datapaths(flow, DataPathType::MayRunOn, Direction::In).size(), 0u);
    EXPECT_EQ(m.datapaths(s.pus[0], DataPathType::MayRunOn, Direction::In).size(), 1u);
    std::size_t n = 0;
    for (auto dp : m.datapaths(flow, DataPathType::MayRunOn, Direction::Out)) {
        EXPECT_EQ(m.source(dp), flow);
        EXPECT_EQ(m.type(dp), DataPathType::MayRunOn);
        ++n;
    }
    EXPECT_EQ(n, 8u);
    EXPECT_FALSE(m.oriented(sym));
    EXPECT_TRUE(std::isnan(m.bandwidth(sym)));
    EXPECT_DOUBLE_EQ(m.latency(sym), 21.0);
    m.set_bandwidth(sym, 10.0);
    EXPECT_DOUBLE_EQ(m.bandwidth(sym), 10.0);
    EXPECT_EQ(m.all_datapaths(s.numas[0], Direction::Out).size(), 2u);
    EXPECT_EQ(m.datapath_types_on(flow, Direction::Out).size(), 2u);
    // Removing from the middle of a list keeps the others reachable.
    auto all = m.all_datapaths(flow, Direction::Out);
    m.remove_datapath(all[3]);
    EXPECT_EQ(m.datapaths(flow, DataPathType::MayRunOn, Direction::Out).size() +
                  m.datapaths(flow, DataPathType::RanOn, Direction::Out).size(), 8u);
    std::size_t walked = 0;
    for (auto dp : m.datapaths(flow, DataPathType::MayRunOn, Direction::Out)) { (void)dp; ++walked; }
    EXPECT_EQ(walked, m.datapaths(flow, DataPathType::MayRunOn, Direction::Out).size());
    EXPECT_TRUE(m.check_consistency().empty());
}

TEST(Model, ConsistencyCheckOnALargeFlatTree) {
    Model m;
    auto root = m.add_component(ComponentType::Topology, kNoComponent);
    for (int i = 0; i < 10000; ++i) m.add_component(ComponentType::Thread, root, "", "", i);
    EXPECT_TRUE(m.check_consistency().empty());
    m.remove_subtree(root);
    EXPECT_EQ(m.component_count(), 0u);
    EXPECT_TRUE(m.check_consistency().empty());
}

TEST(Model, AverageFootprintPerComponentIsSmall) {
    Model m;
    auto root = m.add_component(ComponentType::Topology, kNoComponent);
    for (int i = 0; i < 100000; ++i) m.add_component(ComponentType::Thread, root, "", "", i);
    // Record plus type index; the benchmark reports the exact figure.
    EXPECT_LE(m.memory_bytes_excluding_strings() / m.component_count(), 64u * 2);
}
