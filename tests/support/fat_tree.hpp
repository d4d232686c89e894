// Synthetic fat trees for the fabric tests and bench/bench_network.cpp:
// the ports report ibnetdiscover -p would print for them, and their cables
// as a plain edge list (what an independent breadth-first search walks).
//
//  - 2 levels: leaves of `down` hosts each, every leaf cabled once to each
//    of `up` spine switches;
//  - 3 levels (k-ary fat tree of radix k): pods of k/2 leaves and k/2
//    aggregation switches cabled all to all, aggregation switch j of each
//    pod cabled to the k/2 core switches of group j; k/2 hosts per leaf.
// Hosts fill the leaves in order; leaves left without a host are still there.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

namespace stacksage::testing {

struct FatTree {
    std::string ports_report;  // ibnetdiscover -p
    std::vector<std::string> names;  // node i's description ("host00001 HCA-1", "leaf-3", ...)
    std::vector<bool> is_switch;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> cables;  // node indices
    std::vector<std::uint32_t> hosts;  // node indices of the host adapters
    std::vector<std::string> host_names;  // "host00001", ...
    std::vector<std::uint32_t> leaf_of_host;  // node index of each host's leaf
    std::size_t leaves = 0;
};

namespace fat_tree_detail {
struct Builder {
    FatTree t;
    std::vector<std::uint16_t> next_port;
    std::vector<std::uint64_t> guid;
    std::vector<std::uint32_t> lid;
    std::uint32_t add(std::string name, bool sw) {
        const auto i = static_cast<std::uint32_t>(t.names.size());
        t.names.push_back(std::move(name));
        t.is_switch.push_back(sw);
        next_port.push_back(1);
        guid.push_back((sw ? 0x0008f10500000000ULL : 0x0002c90300000000ULL) + i);
        lid.push_back(i + 1);
        return i;
    }
    void cable(std::uint32_t a, std::uint32_t b) {
        const std::uint16_t pa = next_port[a]++, pb = next_port[b]++;
        t.cables.emplace_back(a, b);
        auto line = [&](std::uint32_t x, std::uint16_t px, std::uint32_t y, std::uint16_t py) {
            t.ports_report += fmt::format("{} {:5} {:2} 0x{:016x} 4x EDR - {} {:5} {:2} 0x{:016x} ( '{}' - '{}' )\n",
                                          t.is_switch[x] ? "SW" : "CA", lid[x], px, guid[x],
                                          t.is_switch[y] ? "SW" : "CA", lid[y], py, guid[y], t.names[x], t.names[y]);
        };
        line(a, pa, b, pb);
        line(b, pb, a, pa);
    }
};
}  // namespace fat_tree_detail

inline FatTree two_level_fat_tree(std::size_t hosts, std::size_t down, std::size_t up) {
    fat_tree_detail::Builder b;
    b.t.ports_report = "DR path slid 0; dlid 0; 0 -> new Channel Adapter {0002c90300000000} portnum 1 lid 0-0 \"\"\n";
    const std::size_t leaves = (hosts + down - 1) / down;
    std::vector<std::uint32_t> spine, leaf;
    for (std::size_t s = 0; s < up; ++s) spine.push_back(b.add(fmt::format("spine-{}", s), true));
    for (std::size_t l = 0; l < leaves; ++l) leaf.push_back(b.add(fmt::format("leaf-{}", l), true));
    for (std::size_t l = 0; l < leaves; ++l)
        for (std::uint32_t s : spine) b.cable(leaf[l], s);
    for (std::size_t h = 0; h < hosts; ++h) {
        const std::string name = fmt::format("host{:05d}", h);
        const std::uint32_t a = b.add(name + " HCA-1", false);
        b.cable(a, leaf[h / down]);
        b.t.hosts.push_back(a);
        b.t.host_names.push_back(name);
        b.t.leaf_of_host.push_back(leaf[h / down]);
    }
    b.t.leaves = leaves;
    return std::move(b.t);
}

inline FatTree three_level_fat_tree(std::size_t hosts, std::size_t k) {
    fat_tree_detail::Builder b;
    const std::size_t half = k / 2;
    std::vector<std::uint32_t> core;
    for (std::size_t c = 0; c < half * half; ++c) core.push_back(b.add(fmt::format("core-{}", c), true));
    std::vector<std::uint32_t> leaves;
    for (std::size_t p = 0; p < k; ++p) {
        std::vector<std::uint32_t> agg, edge;
        for (std::size_t j = 0; j < half; ++j) agg.push_back(b.add(fmt::format("agg-{}-{}", p, j), true));
        for (std::size_t j = 0; j < half; ++j) edge.push_back(b.add(fmt::format("leaf-{}-{}", p, j), true));
        for (std::uint32_t e : edge)
            for (std::uint32_t a : agg) b.cable(e, a);
        for (std::size_t j = 0; j < half; ++j)
            for (std::size_t c = 0; c < half; ++c) b.cable(agg[j], core[j * half + c]);
        leaves.insert(leaves.end(), edge.begin(), edge.end());
    }
    for (std::size_t h = 0; h < hosts && h / half < leaves.size(); ++h) {
        const std::string name = fmt::format("host{:05d}", h);
        const std::uint32_t a = b.add(name + " HCA-1", false);
        b.cable(a, leaves[h / half]);
        b.t.hosts.push_back(a);
        b.t.host_names.push_back(name);
        b.t.leaf_of_host.push_back(leaves[h / half]);
    }
    b.t.leaves = leaves.size();
    return std::move(b.t);
}

}  // namespace stacksage::testing
