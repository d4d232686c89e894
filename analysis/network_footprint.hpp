// The job on the network: where a run's joined nodes sit in the fabric.
//
//  - leaf switches: the switches the nodes' adapters hang from, against the
//    fewest leaf switches of the fabric that could hold that many nodes
//    (the fullest leaves first);
//  - hops: for every pair of nodes, the cables between their adapters
//    (two nodes under one leaf switch: 2), as a histogram, along shortest
//    paths, and along the real routes where the switches' forwarding tables
//    were read (each switch sends a destination LID out of one port);
//  - what the paths cross: the switches and cables on some shortest path
//    between two of the job's nodes (and those on the real routes).
//
// Hop counts are computed per pair of leaf switches (one breadth-first
// search from each leaf the job uses, over switches only: adapters do not
// forward), so a 10,000-node job costs hundreds of searches, not 50 million.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/fabric_join.hpp"
#include "core/fabric.hpp"

namespace stacksage {

struct LeafUse {
    std::uint32_t switch_node = kNoFabricNode;
    std::size_t job_nodes = 0;   // the job's nodes under it
    std::size_t capacity = 0;    // adapters under it in the fabric
};

struct NetworkFootprint {
    std::size_t nodes = 0;                 // joined nodes
    // Switch levels: 1 for a leaf (an adapter hangs from it), 2 for the
    // switches above leaves, ...; 0 for a switch no leaf reaches; by fabric
    // node (0 for adapters).
    std::vector<std::uint8_t> level;
    std::size_t levels = 0;                // the highest level
    std::size_t leaf_switches = 0;         // in the fabric
    std::vector<LeafUse> leaves_used;      // most job nodes first
    std::size_t leaves_needed = 0;         // fewest leaves that could hold the job's nodes
    // Whether leaf capacities are known (a fabric file); a switch tree from
    // SLURM_TOPOLOGY_ADDR names only the job's own nodes.
    bool capacity_known = true;
    // pairs[h]: pairs of nodes h cables apart (shortest paths).
    std::vector<std::uint64_t> hop_pairs;
    std::uint64_t unreachable_pairs = 0;
    // Along the forwarding tables (empty when none were read).
    std::vector<std::uint64_t> routed_hop_pairs;
    std::uint64_t unrouted_pairs = 0;     // a table missing, or a route that loops or ends nowhere
    // Crossed by some shortest path between two job nodes (cables to the
    // job's adapters included), and by the real routes; fabric indices.
    std::vector<std::uint32_t> switches_crossed;
    std::vector<std::uint32_t> links_crossed;
    std::vector<std::uint32_t> routed_switches_crossed;
    std::vector<std::uint32_t> routed_links_crossed;

    std::uint64_t pairs() const;
    std::size_t max_hops() const;           // 0 without pairs
    double mean_hops() const;
};

// Levels of every switch, as NetworkFootprint::level (also what
// `stacksage topo --network` prints).
std::vector<std::uint8_t> switch_levels(const Fabric& fabric);

// fabric must be finish()ed.
NetworkFootprint compute_network_footprint(const Fabric& fabric, const FabricJoin& join);

}  // namespace stacksage
