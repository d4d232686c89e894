#include "analysis/network_spread_check.hpp"

#include <algorithm>
#include <map>

#include "core/plural.hpp"

namespace stacksage {

std::string switch_label(const Fabric& fabric, std::uint32_t node) {
    const FabricNode& n = fabric.nodes()[node];
    return n.description.empty() ? format_guid(n.guid) : n.description;
}

std::vector<std::string> hosts_by_leaf_switch(const Fabric& fabric, const FabricJoin& join) {
    std::map<std::uint32_t, std::vector<std::string>> by_switch;
    for (const JoinedNode& j : join.joined) {
        std::uint32_t leaf = kNoFabricNode;
        const std::uint32_t a = j.adapters.front();
        for (const auto* nb = fabric.neighbours_begin(a); nb != fabric.neighbours_end(a); ++nb)
            if (fabric.nodes()[nb->node].kind == FabricNodeKind::Switch) {
                leaf = nb->node;
                break;
            }
        by_switch[leaf].push_back(j.host);
    }
    std::vector<std::vector<std::string>*> lists;
    for (auto& [leaf, hosts] : by_switch) lists.push_back(&hosts);
    std::stable_sort(lists.begin(), lists.end(), [](auto* a, auto* b) { return a->size() > b->size(); });
    std::vector<std::string> out;
    for (auto* l : lists) out.insert(out.end(), l->begin(), l->end());
    return out;
}

std::optional<Finding> check_network_spread(const Fabric& fabric, const NetworkFootprint& fp, const FabricJoin& join) {
    if (fp.nodes < 2) return std::nullopt;
    Finding f;
    f.code = FindingCode::NetworkSpread;
    f.check = "network";
    const std::size_t used = fp.leaves_used.size();
    const std::size_t needed = fp.leaves_needed;
    const bool spread = fp.capacity_known && needed > 0 && used > kNetworkSpreadWarningRatio * needed;
    f.severity = spread ? Severity::Warning : Severity::Info;
    std::string where = "The job's " + counted(fp.nodes, "node") + " hang from " + counted(used, "leaf switch");
    if (fp.capacity_known)
        where += ", where " + std::to_string(needed) + " could hold them";
    else
        where += " (Slurm's switch tree names only the job's own nodes: the fewest that could hold them is unknown)";
    f.message = where + "; the farthest two are " + counted(fp.max_hops(), "cable") + " apart";
    std::string detail = "hops between the " + counted(fp.pairs(), "pair") + " of nodes (shortest paths):";
    for (std::size_t h = 0; h < fp.hop_pairs.size(); ++h)
        if (fp.hop_pairs[h] != 0) detail += " " + std::to_string(h) + " hops: " + std::to_string(fp.hop_pairs[h]) + ";";
    if (fp.unreachable_pairs != 0) detail += " unreachable: " + std::to_string(fp.unreachable_pairs) + ";";
    if (!fp.routed_hop_pairs.empty() || fp.unrouted_pairs != 0) {
        detail += " along the forwarding tables:";
        for (std::size_t h = 0; h < fp.routed_hop_pairs.size(); ++h)
            if (fp.routed_hop_pairs[h] != 0)
                detail += " " + std::to_string(h) + " hops: " + std::to_string(fp.routed_hop_pairs[h]) + ";";
        if (fp.unrouted_pairs != 0) detail += " no route read: " + std::to_string(fp.unrouted_pairs) + ";";
    }
    detail += " the paths cross " + counted(fp.switches_crossed.size(), "switch") + " and " +
              counted(fp.links_crossed.size(), "cable");
    if (!join.unjoined.empty()) detail += "; " + counted(join.unjoined.size(), "node") + " could not be placed";
    f.detail = detail;
    if (spread || (fp.capacity_known && used > needed)) {
        f.suggestion = "ask Slurm to keep the job under " + counted(needed, "leaf switch") + " (sbatch --switches=" +
                       std::to_string(needed) +
                       ", with @HH:MM:SS to bound the wait for them); without Slurm, give the launcher a host file "
                       "that lists the nodes switch by switch";
        f.remedy.launcher = "sbatch";
        f.remedy.launcher_options = {"--switches=" + std::to_string(needed)};
        f.hosts = hosts_by_leaf_switch(fabric, join);
    }
    f.figures = {{"nodes", static_cast<std::int64_t>(fp.nodes)},
                 {"leaf_switches_used", static_cast<std::int64_t>(used)},
                 {"leaf_switches_needed", static_cast<std::int64_t>(needed)},
                 {"max_hops", static_cast<std::int64_t>(fp.max_hops())},
                 {"switches_crossed", static_cast<std::int64_t>(fp.switches_crossed.size())},
                 {"links_crossed", static_cast<std::int64_t>(fp.links_crossed.size())},
                 {"nodes_unjoined", static_cast<std::int64_t>(join.unjoined.size())}};
    return f;
}

}  // namespace stacksage
