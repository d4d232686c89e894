#include "analysis/fabric_join.hpp"

#include <algorithm>
#include <unordered_map>

namespace stacksage {

std::string_view to_string(JoinMethod method) {
    switch (method) {
        case JoinMethod::Guid: return "guid";
        case JoinMethod::NodeDescription: return "node-description";
        case JoinMethod::MapFile: return "map-file";
        case JoinMethod::SlurmTopology: return "slurm-topology";
    }
    return "unknown";
}

namespace {
std::string_view short_name(std::string_view host) { return host.substr(0, host.find('.')); }
}  // namespace

std::string_view description_host(std::string_view description) {
    std::size_t start = 0;
    while (start < description.size() && (description[start] == ' ' || description[start] == '\t')) ++start;
    std::size_t end = start;
    while (end < description.size() && description[end] != ' ' && description[end] != '\t') ++end;
    return short_name(description.substr(start, end - start));
}

FabricJoin join_hosts(const Fabric& fabric, const std::vector<HostFabricIds>& hosts,
                      const std::vector<NetworkMapEntry>& map) {
    const auto& nodes = fabric.nodes();
    // Adapters by the host their description (or a Slurm tree) names.
    std::unordered_map<std::string_view, std::vector<std::uint32_t>> by_name;
    bool slurm_tree = false;
    for (std::uint32_t i = 0; i < nodes.size(); ++i) {
        if (nodes[i].kind != FabricNodeKind::Adapter) continue;
        if (!nodes[i].host.empty()) {
            slurm_tree = true;
            by_name[short_name(nodes[i].host)].push_back(i);
        } else {
            const std::string_view h = description_host(nodes[i].description);
            if (!h.empty()) by_name[h].push_back(i);
        }
    }
    std::unordered_map<std::string_view, std::vector<std::uint32_t>> by_map;
    for (const NetworkMapEntry& e : map) {
        const std::uint32_t n = fabric.find_guid(e.guid);
        if (n == kNoFabricNode || nodes[n].kind != FabricNodeKind::Adapter) continue;
        by_map[short_name(e.host)].push_back(n);
    }
    FabricJoin out;
    for (const HostFabricIds& h : hosts) {
        JoinedNode j;
        j.host = h.host;
        for (std::uint64_t g : h.guids) {
            const std::uint32_t n = fabric.find_guid(g);
            if (n != kNoFabricNode && nodes[n].kind == FabricNodeKind::Adapter &&
                std::find(j.adapters.begin(), j.adapters.end(), n) == j.adapters.end())
                j.adapters.push_back(n);
        }
        if (!j.adapters.empty()) {
            j.method = JoinMethod::Guid;
        } else if (auto it = by_name.find(short_name(h.host)); it != by_name.end()) {
            j.adapters = it->second;
            j.method = slurm_tree ? JoinMethod::SlurmTopology : JoinMethod::NodeDescription;
        } else if (auto m = by_map.find(short_name(h.host)); m != by_map.end()) {
            j.adapters = m->second;
            j.method = JoinMethod::MapFile;
        }
        if (!j.adapters.empty()) {
            out.joined.push_back(std::move(j));
            continue;
        }
        std::string reason;
        if (slurm_tree) {
            reason = "Slurm gave no SLURM_TOPOLOGY_ADDR for its processes";
        } else {
            if (!h.topology_problem.empty()) reason = h.topology_problem;
            else if (h.guids.empty()) reason = "its topology names no InfiniBand adapter";
            else
                reason = "none of the " + std::to_string(h.guids.size()) +
                         " GUIDs its topology names is an adapter of the fabric";
            reason += "; no adapter's node description starts with its name";
            reason += map.empty() ? "; no map file was given (--network-map)" : "; the map file does not name it";
        }
        out.unjoined.push_back(UnjoinedNode{h.host, reason + "."});
    }
    return out;
}

}  // namespace stacksage
