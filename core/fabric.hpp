// Fabric: an InfiniBand network as ibnetdiscover sees it, the switches,
// host adapters (CAs) and routers, the cables between their ports, and the
// switches' unicast forwarding tables (ibroute) where they were dumped.
//
// Plain arrays addressed by index, because a fabric of 10,000 hosts is read,
// joined and walked in well under a second (bench/bench_network.cpp): the
// readers (parsers/ibnetdiscover_*.cpp) fill it, the join and the footprint
// (analysis/fabric_join.hpp, analysis/network_footprint.hpp) walk it, and
// fabric_model.hpp turns it into components and DataPaths for the exports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace stacksage {

enum class FabricNodeKind : std::uint8_t { Switch, Adapter, Router };

std::string_view to_string(FabricNodeKind kind);

inline constexpr std::uint32_t kNoFabricNode = 0xffffffffu;

struct FabricNode {
    FabricNodeKind kind = FabricNodeKind::Switch;
    // The node GUID; for an adapter read from the ports report (which names
    // ports only), its port GUID.
    std::uint64_t guid = 0;
    std::uint32_t lid = 0;           // a switch's port-0 LID; an adapter's first port's LID; 0: unknown
    std::string description;         // NodeDescription: "mirage001 HCA-1", "Voltaire 4036 # 4036-8C9E"
    std::string subnet;              // "fe80:0000:0000:0000" when the input said; "" otherwise
    std::vector<std::uint64_t> port_guids;  // adapters: the GUID of each port seen
    std::vector<std::uint32_t> port_lids;   // adapters: the LID of each port seen (same order)
    // Where the input declared it: the line of its first mention.
    std::uint32_t line = 0;
    // A switch tree made from Slurm's SLURM_TOPOLOGY_ADDR (no ibnetdiscover):
    // the host a leaf "adapter" stands for; "" otherwise.
    std::string host;
};

// One cable, stored once whichever end the input listed first.
struct FabricLink {
    std::uint32_t a = 0, b = 0;      // node indices
    std::uint16_t port_a = 0, port_b = 0;
    std::uint8_t width = 0;          // lanes: 1, 4, 8, 12; 0: unknown
    std::string speed;               // "SDR", "QDR", "EDR", "HDR", ...; "" unknown
};

// Per-lane data rate in Gbit/s after line coding (SDR 2, DDR 4, QDR 8,
// FDR10 10, FDR 13.64, EDR 25, HDR 50, NDR 100, XDR 200); 0 when unknown.
double lane_gbits(std::string_view speed);

// A switch's unicast linear forwarding table: the output port for each
// destination LID (kNoRoute where the table has no entry).
struct ForwardingTable {
    static constexpr std::uint16_t kNoRoute = 0xffff;
    std::vector<std::uint16_t> out_port;  // indexed by LID
};

class Fabric {
public:
    // Adds a node, or returns the one with that GUID (and kind). The GUID
    // indexes it, its port GUIDs too (add_port_guid).
    std::uint32_t add_node(FabricNodeKind kind, std::uint64_t guid, std::string_view description,
                           std::uint32_t line);
    void add_port_guid(std::uint32_t node, std::uint64_t port_guid, std::uint32_t lid);
    // Indexes the node's LID within its subnet (LIDs are per subnet).
    void index_lid(std::uint32_t node, std::uint32_t lid);
    // Adds the cable unless it is known (each cable is listed from both ends).
    // \return false when one of its ports already has another cable.
    bool add_link(std::uint32_t a, std::uint16_t port_a, std::uint32_t b, std::uint16_t port_b,
                  std::uint8_t width, std::string_view speed);

    // The node whose node or port GUID this is; kNoFabricNode when none.
    std::uint32_t find_guid(std::uint64_t guid) const;
    // The node with this LID (switch port 0 or adapter port) in a subnet;
    // kNoFabricNode when none.
    std::uint32_t find_lid(std::string_view subnet, std::uint32_t lid) const;

    const std::vector<FabricNode>& nodes() const { return nodes_; }
    std::vector<FabricNode>& nodes() { return nodes_; }
    const std::vector<FabricLink>& links() const { return links_; }
    std::size_t count(FabricNodeKind kind) const;

    // Forwarding tables, by switch node index (empty when none was read).
    void set_forwarding_table(std::uint32_t switch_node, ForwardingTable table);
    const ForwardingTable* forwarding_table(std::uint32_t switch_node) const;
    bool has_forwarding_tables() const { return !tables_.empty(); }

    // Neighbours in CSR form, built by finish() after the readers are done.
    struct Neighbour {
        std::uint32_t node;
        std::uint32_t link;
        std::uint16_t local_port;
    };
    void finish();
    const Neighbour* neighbours_begin(std::uint32_t node) const { return adjacency_.data() + offsets_[node]; }
    const Neighbour* neighbours_end(std::uint32_t node) const { return adjacency_.data() + offsets_[node + 1]; }
    std::size_t degree(std::uint32_t node) const { return offsets_[node + 1] - offsets_[node]; }
    // The neighbour through a node's port; nullptr when nothing is cabled there.
    const Neighbour* through_port(std::uint32_t node, std::uint16_t port) const;

    // Files the fabric was read from, for messages.
    std::vector<std::string> sources;

private:
    std::vector<FabricNode> nodes_;
    std::vector<FabricLink> links_;
    std::unordered_map<std::uint64_t, std::uint32_t> by_guid_;
    std::unordered_map<std::uint64_t, std::uint32_t> by_lid_;  // subnet index << 32 | LID
    std::vector<std::string> subnets_;
    std::optional<std::uint64_t> find_subnet(std::string_view subnet) const;
    // (node << 16 | port) -> link, to merge both listings of a cable.
    std::unordered_map<std::uint64_t, std::uint32_t> by_port_;
    std::unordered_map<std::uint32_t, ForwardingTable> tables_;
    std::vector<Neighbour> adjacency_;
    std::vector<std::uint32_t> offsets_;
};

// "0x0002c903000b2f73", "0002:c903:000b:2f73" (hwloc's form) or the last four
// groups of a GID ("fe80:0000:0000:0000:78e7:d103:0024:a7cd"): the 64-bit GUID.
std::optional<std::uint64_t> parse_guid(std::string_view text);
std::string format_guid(std::uint64_t guid);  // "0x0002c903000b2f73"

// The InfiniBand GUIDs a node's own topology names (its OpenFabrics OS
// devices: NodeGUID, and the port GUID inside each Port<n>GID<m>), what the
// join (analysis/fabric_join.hpp) matches the fabric's adapters on.
struct HostFabricIds {
    std::string host;
    std::vector<std::uint64_t> guids;
    std::string topology_problem;  // why no GUIDs were read ("" when the topology was read)
};

// One line of a map file (`--network-map`): the host an adapter belongs to.
struct NetworkMapEntry {
    std::uint64_t guid = 0;
    std::string host;
};

}  // namespace stacksage
