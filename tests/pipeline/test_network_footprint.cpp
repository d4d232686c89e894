// The join and the footprint on synthetic fat trees (2 and 3 levels, up to
// 10,000 hosts), with hop counts checked against a breadth-first search of
// the generator's own cable list, and on the real plafrim dump with its
// forwarding tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <queue>
#include <random>

#include "analysis/fabric_join.hpp"
#include "analysis/network_footprint.hpp"
#include "analysis/network_spread_check.hpp"
#include "analysis/slurm_switch_tree.hpp"
#include "parsers/fabric_loader.hpp"
#include "parsers/ibnetdiscover_ports.hpp"
#include "tests/support/fat_tree.hpp"

using namespace stacksage;
namespace gen = stacksage::testing;

namespace {
Fabric read(const gen::FatTree& t) {
    Fabric f;
    Status s = read_ibnetdiscover_ports(t.ports_report, "generated", "", f);
    EXPECT_TRUE(s) << (s ? "" : s.error().message);
    f.finish();
    return f;
}

std::vector<HostFabricIds> by_name(const gen::FatTree& t, const std::vector<std::size_t>& chosen) {
    std::vector<HostFabricIds> hosts;
    for (std::size_t h : chosen) hosts.push_back(HostFabricIds{t.host_names[h], {}, {}});
    return hosts;
}

// Cables between two generator nodes: a search over the generator's list,
// where hosts do not forward.
std::vector<int> bfs(const gen::FatTree& t, std::uint32_t from) {
    std::vector<std::vector<std::uint32_t>> adj(t.names.size());
    for (auto [a, b] : t.cables) {
        adj[a].push_back(b);
        adj[b].push_back(a);
    }
    std::vector<int> d(t.names.size(), -1);
    std::queue<std::uint32_t> q;
    d[from] = 0;
    q.push(from);
    while (!q.empty()) {
        const std::uint32_t v = q.front();
        q.pop();
        if (v != from && !t.is_switch[v]) continue;
        for (std::uint32_t w : adj[v])
            if (d[w] < 0) {
                d[w] = d[v] + 1;
                q.push(w);
            }
    }
    return d;
}

void expect_hops_match_bfs(const gen::FatTree& t, const std::vector<std::size_t>& chosen) {
    Fabric f = read(t);
    const FabricJoin join = join_hosts(f, by_name(t, chosen), {});
    ASSERT_EQ(join.joined.size(), chosen.size());
    const NetworkFootprint fp = compute_network_footprint(f, join);
    std::vector<std::uint64_t> expected;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
        const std::vector<int> d = bfs(t, t.hosts[chosen[i]]);
        for (std::size_t j = i + 1; j < chosen.size(); ++j) {
            const int h = d[t.hosts[chosen[j]]];
            ASSERT_GE(h, 0);
            if (expected.size() <= static_cast<std::size_t>(h)) expected.resize(h + 1, 0);
            ++expected[h];
        }
    }
    EXPECT_EQ(fp.hop_pairs, expected);
    EXPECT_EQ(fp.pairs(), chosen.size() * (chosen.size() - 1) / 2);
}

std::vector<std::size_t> sample(std::size_t n, std::size_t of, unsigned seed) {
    std::vector<std::size_t> all(of);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), std::mt19937(seed));
    all.resize(n);
    return all;
}
}  // namespace

TEST(NetworkFootprint, TwoLevelHopsMatchBreadthFirstSearch) {
    const auto t = gen::two_level_fat_tree(2000, 20, 8);
    expect_hops_match_bfs(t, sample(150, 2000, 1));
}

TEST(NetworkFootprint, ThreeLevelHopsMatchBreadthFirstSearch) {
    const auto t = gen::three_level_fat_tree(10000, 36);
    ASSERT_EQ(t.hosts.size(), 10000u);
    expect_hops_match_bfs(t, sample(120, 10000, 2));
    // Hops in a full 3-level tree (k = 34: 9,826 hosts): 2 (same leaf), 4
    // (same pod), 6 (across pods). (In a tree partly filled, switches with no
    // host below count their levels from the nearest leaf that has one.)
    const auto full = gen::three_level_fat_tree(34 * 34 * 34 / 4, 34);
    Fabric f = read(full);
    const NetworkFootprint fp = compute_network_footprint(f, join_hosts(f, by_name(full, sample(500, full.hosts.size(), 3)), {}));
    EXPECT_EQ(fp.levels, 3u);
    EXPECT_EQ(fp.max_hops(), 6u);
    for (std::size_t h = 0; h < fp.hop_pairs.size(); ++h) {
        if (fp.hop_pairs[h] != 0) {
            EXPECT_TRUE(h == 2 || h == 4 || h == 6) << h;
        }
    }
}

TEST(NetworkFootprint, LeavesUsedAgainstNeeded) {
    const auto t = gen::two_level_fat_tree(200, 20, 4);  // 10 leaves of 20 hosts
    Fabric f = read(t);
    // 20 hosts, one per leaf for the first 10 then the rest: spread over all 10 leaves.
    std::vector<std::size_t> spread;
    for (std::size_t i = 0; i < 20; ++i) spread.push_back((i % 10) * 20 + i / 10);
    FabricJoin join = join_hosts(f, by_name(t, spread), {});
    NetworkFootprint fp = compute_network_footprint(f, join);
    EXPECT_EQ(fp.leaf_switches, 10u);
    EXPECT_EQ(fp.leaves_used.size(), 10u);
    EXPECT_EQ(fp.leaves_needed, 1u);
    EXPECT_EQ(fp.hop_pairs[2], 10u);   // two per leaf: one pair each
    EXPECT_EQ(fp.hop_pairs[4], 180u);  // the other 190 - 10
    EXPECT_EQ(fp.switches_crossed.size(), 14u);  // 10 leaves, 4 spines
    EXPECT_EQ(fp.links_crossed.size(), 20u + 40u);
    auto finding = check_network_spread(f, fp, join);
    ASSERT_TRUE(finding);
    EXPECT_EQ(to_string(finding->code), "network-spread");
    EXPECT_EQ(finding->severity, Severity::Warning);
    EXPECT_EQ(finding->remedy.launcher, "sbatch");
    ASSERT_EQ(finding->remedy.launcher_options.size(), 1u);
    EXPECT_EQ(finding->remedy.launcher_options[0], "--switches=1");
    EXPECT_EQ(finding->figure("leaf_switches_used"), 10);
    ASSERT_EQ(finding->hosts.size(), 20u);  // the host file, switch by switch
    EXPECT_EQ(finding->hosts[0], "host00000");
    EXPECT_EQ(finding->hosts[1], "host00001");
    // Packed under one leaf: information, one switch crossed.
    std::vector<std::size_t> packed;
    for (std::size_t i = 0; i < 20; ++i) packed.push_back(40 + i);
    join = join_hosts(f, by_name(t, packed), {});
    fp = compute_network_footprint(f, join);
    EXPECT_EQ(fp.leaves_used.size(), 1u);
    EXPECT_EQ(fp.switches_crossed.size(), 1u);
    EXPECT_EQ(fp.max_hops(), 2u);
    finding = check_network_spread(f, fp, join);
    ASSERT_TRUE(finding);
    EXPECT_EQ(finding->severity, Severity::Info);
    EXPECT_TRUE(finding->suggestion.empty());
    // A single node: no finding.
    join = join_hosts(f, by_name(t, {0}), {});
    EXPECT_FALSE(check_network_spread(f, compute_network_footprint(f, join), join));
}

TEST(FabricJoin, ByGuidThenNameThenMap) {
    Result<LoadedFabric> loaded = load_fabric(STACKSAGE_TEST_DATA_DIR "/network/hwloc-netloc-plafrim");
    ASSERT_TRUE(loaded);
    const Fabric& f = loaded->fabric;
    std::vector<HostFabricIds> hosts = {
        {"mirage001", {0x78e7d1030024a7cdULL}, {}},  // its port GUID
        {"mirage002.plafrim.cluster", {}, {}},       // by node description, domain ignored
        {"renamed-node", {}, {}},                    // by the map
        {"ghost", {0x1234ULL}, {}},                  // nothing
    };
    const std::uint64_t mirage003 = f.nodes()[join_hosts(f, {{"mirage003", {}, {}}}, {}).joined.at(0).adapters[0]].guid;
    const FabricJoin j = join_hosts(f, hosts, {{mirage003, "renamed-node"}});
    ASSERT_EQ(j.joined.size(), 3u);
    EXPECT_EQ(j.joined[0].method, JoinMethod::Guid);
    EXPECT_EQ(f.nodes()[j.joined[0].adapters[0]].description, "mirage001 HCA-1");
    EXPECT_EQ(j.joined[1].method, JoinMethod::NodeDescription);
    EXPECT_EQ(f.nodes()[j.joined[1].adapters[0]].description, "mirage002 HCA-1");
    EXPECT_EQ(j.joined[2].method, JoinMethod::MapFile);
    ASSERT_EQ(j.unjoined.size(), 1u);
    EXPECT_EQ(j.unjoined[0].host, "ghost");
    EXPECT_NE(j.unjoined[0].reason.find("GUIDs"), std::string::npos) << j.unjoined[0].reason;
    EXPECT_NE(j.unjoined[0].reason.find("map file does not name it"), std::string::npos) << j.unjoined[0].reason;
    EXPECT_NE(join_hosts(f, {{"ghost", {}, {}}}, {}).unjoined.at(0).reason.find("--network-map"), std::string::npos);
}

TEST(NetworkFootprint, RealRoutesOnPlafrim) {
    Result<LoadedFabric> loaded = load_fabric(STACKSAGE_TEST_DATA_DIR "/network/hwloc-netloc-plafrim");
    ASSERT_TRUE(loaded);
    const Fabric& f = loaded->fabric;
    std::vector<HostFabricIds> hosts;
    for (const char* h : {"mirage001", "mirage002", "mirabelle001", "fourmi064", "bonobo020"})
        hosts.push_back({h, {}, {}});
    const FabricJoin j = join_hosts(f, hosts, {});
    ASSERT_EQ(j.joined.size(), 5u);
    const NetworkFootprint fp = compute_network_footprint(f, j);
    EXPECT_EQ(fp.pairs(), 10u);
    // Every pair routed by the tables, and never shorter than the shortest path.
    const std::uint64_t routed = std::accumulate(fp.routed_hop_pairs.begin(), fp.routed_hop_pairs.end(), std::uint64_t{0});
    EXPECT_EQ(routed + fp.unrouted_pairs, 10u);
    EXPECT_GT(routed, 0u);
    std::size_t routed_min = 0;
    while (routed_min < fp.routed_hop_pairs.size() && fp.routed_hop_pairs[routed_min] == 0) ++routed_min;
    std::size_t shortest_min = 0;
    while (fp.hop_pairs[shortest_min] == 0) ++shortest_min;
    EXPECT_GE(routed_min, shortest_min);
    EXPECT_FALSE(fp.routed_links_crossed.empty());
}

TEST(SlurmSwitchTree, AddressesMakeATree) {
    std::vector<SlurmTopologyAddress> a = {
        {"n1", "top.s0.n1", "switch.switch.node"},
        {"n2", "top.s0.n2", "switch.switch.node"},
        {"n3", "top.s1.n3", "switch.switch.node"},
        {"n4", "n4", "node"},  // no switch: left out
    };
    std::optional<Fabric> tree = slurm_switch_tree(a);
    ASSERT_TRUE(tree);
    EXPECT_EQ(tree->count(FabricNodeKind::Switch), 3u);
    EXPECT_EQ(tree->count(FabricNodeKind::Adapter), 3u);
    std::vector<HostFabricIds> hosts = {{"n1", {}, {}}, {"n2", {}, {}}, {"n3", {}, {}}, {"n4", {}, {}}};
    const FabricJoin j = join_hosts(*tree, hosts, {});
    ASSERT_EQ(j.joined.size(), 3u);
    EXPECT_EQ(j.joined[0].method, JoinMethod::SlurmTopology);
    ASSERT_EQ(j.unjoined.size(), 1u);
    const NetworkFootprint fp = compute_network_footprint(*tree, j);
    EXPECT_FALSE(fp.capacity_known);
    EXPECT_EQ(fp.leaves_used.size(), 2u);
    EXPECT_EQ(fp.hop_pairs[2], 1u);
    EXPECT_EQ(fp.hop_pairs[4], 2u);
    auto finding = check_network_spread(*tree, fp, j);
    ASSERT_TRUE(finding);
    EXPECT_EQ(finding->severity, Severity::Info);
    EXPECT_FALSE(slurm_switch_tree({{"n4", "n4", "node"}}));
}

TEST(NetworkFootprint, SlurmTopologyConfKnowsTheLeavesCapacity) {
    Fabric f;
    std::vector<std::string> notes;
    ASSERT_TRUE(read_fabric_text("SwitchName=s1 Nodes=node[1-2]\nSwitchName=s2 Nodes=node[3-4]\nSwitchName=top "
                                 "Switches=s[1-2]\n",
                                 "topology.conf", "", f, notes));
    f.finish();
    const FabricJoin j = join_hosts(f, {{"node1", {}, {}}, {"node3", {}, {}}}, {});
    ASSERT_EQ(j.joined.size(), 2u);
    EXPECT_EQ(j.joined[0].method, JoinMethod::NodeDescription);
    const NetworkFootprint fp = compute_network_footprint(f, j);
    EXPECT_TRUE(fp.capacity_known);
    EXPECT_EQ(fp.leaves_used.size(), 2u);
    EXPECT_EQ(fp.leaves_needed, 1u);
    EXPECT_EQ(fp.hop_pairs.at(4), 1u);
    auto finding = check_network_spread(f, fp, j);
    ASSERT_TRUE(finding);
    EXPECT_EQ(finding->severity, Severity::Info);  // 2 leaves where 1 would do: not more than twice
    EXPECT_EQ(finding->remedy.launcher_options.at(0), "--switches=1");
}
