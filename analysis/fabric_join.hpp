// Joining a run's nodes to the fabric's host adapters, as netloc did:
//  1. by GUID: the node's topology names its adapters' node and port GUIDs
//     (parsers/node_fabric_ports.hpp), which the fabric's adapters carry;
//  2. else by host name: an adapter's node description starts with it
//     ("mirage001 HCA-1", "miriel032 qib0"; domains ignored);
//  3. else by the map file: "GUID hostname" lines (parsers/network_map.hpp);
//  4. a switch tree made from Slurm's SLURM_TOPOLOGY_ADDR names its hosts
//     outright (analysis/slurm_switch_tree.hpp).
// A node none of these joins is listed with what was tried.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/fabric.hpp"

namespace stacksage {

enum class JoinMethod : std::uint8_t { Guid, NodeDescription, MapFile, SlurmTopology };

std::string_view to_string(JoinMethod method);  // "guid", "node-description", "map-file", "slurm-topology"

struct JoinedNode {
    std::string host;
    std::vector<std::uint32_t> adapters;  // fabric node indices; the first carries the node's traffic
    JoinMethod method = JoinMethod::Guid;
};

struct UnjoinedNode {
    std::string host;
    std::string reason;  // complete sentence: what was tried
};

struct FabricJoin {
    std::vector<JoinedNode> joined;      // in the order the hosts were given
    std::vector<UnjoinedNode> unjoined;
};

// hosts: the run's nodes with the GUIDs their topologies name (possibly
// none); map: the map file's lines (possibly none).
FabricJoin join_hosts(const Fabric& fabric, const std::vector<HostFabricIds>& hosts,
                      const std::vector<NetworkMapEntry>& map);

// The host part of a node description: its first word, without a domain
// ("mirage001 HCA-1" -> "mirage001").
std::string_view description_host(std::string_view description);

}  // namespace stacksage
