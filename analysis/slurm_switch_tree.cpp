#include "analysis/slurm_switch_tree.hpp"

#include <string>
#include <unordered_map>

namespace stacksage {

namespace {
std::vector<std::string_view> split_dots(std::string_view s) {
    std::vector<std::string_view> parts;
    while (true) {
        const std::size_t dot = s.find('.');
        parts.push_back(s.substr(0, dot));
        if (dot == std::string_view::npos) break;
        s.remove_prefix(dot + 1);
    }
    return parts;
}
}  // namespace

std::vector<SlurmTopologyAddress> slurm_topology_addresses(const RunView& view) {
    std::vector<SlurmTopologyAddress> out;
    for (const NodeView& node : view.nodes)
        for (std::uint32_t p : node.processes) {
            const ProcessView& proc = view.processes[p];
            auto address = proc.identity_value("SLURM_TOPOLOGY_ADDR");
            auto pattern = proc.identity_value("SLURM_TOPOLOGY_ADDR_PATTERN");
            if (!address || !pattern || address->empty()) continue;
            out.push_back(SlurmTopologyAddress{node.host, *address, *pattern});
            break;
        }
    return out;
}

std::optional<Fabric> slurm_switch_tree(const std::vector<SlurmTopologyAddress>& addresses) {
    Fabric fabric;
    std::unordered_map<std::string, std::uint32_t> switches;
    // Synthetic GUIDs: switches and hosts numbered in order of appearance.
    std::uint64_t next_guid = 1;
    for (const SlurmTopologyAddress& a : addresses) {
        const auto names = split_dots(a.address);
        const auto kinds = split_dots(a.pattern);
        if (names.size() != kinds.size() || names.size() < 2 || kinds.back() != "node") continue;
        std::uint32_t above = kNoFabricNode;
        bool well_formed = true;
        for (std::size_t i = 0; i + 1 < names.size(); ++i) {
            if (kinds[i] != "switch" || names[i].empty()) {
                well_formed = false;
                break;
            }
            auto [it, added] = switches.emplace(std::string(names[i]), 0);
            if (added) it->second = fabric.add_node(FabricNodeKind::Switch, next_guid++, names[i], 0);
            const std::uint32_t s = it->second;
            // Ports: a switch's port 0 faces up; a child hangs from the port its index names.
            if (above != kNoFabricNode)
                fabric.add_link(above, static_cast<std::uint16_t>(1 + (s % 0xfffe)), s, 0, 0, "");
            above = s;
        }
        if (!well_formed || above == kNoFabricNode) continue;
        const std::uint32_t host = fabric.add_node(FabricNodeKind::Adapter, next_guid++, a.host, 0);
        fabric.nodes()[host].host = std::string(a.host);
        fabric.add_link(above, static_cast<std::uint16_t>(1 + (host % 0xfffe)), host, 1, 0, "");
    }
    if (switches.empty()) return std::nullopt;
    fabric.sources.push_back("SLURM_TOPOLOGY_ADDR");
    fabric.finish();
    return fabric;
}

}  // namespace stacksage
