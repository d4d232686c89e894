#include <algorithm>
#include <map>

#include "analysis/network_spread_check.hpp"
#include "core/plural.hpp"
#include "reports/network_report.hpp"
#include "reports/terminal_text.hpp"

namespace stacksage {

namespace {
std::string histogram_text(const std::vector<std::uint64_t>& pairs) {
    std::string out;
    for (std::size_t h = 0; h < pairs.size(); ++h)
        if (pairs[h] != 0) out += (out.empty() ? "" : ", ") + std::to_string(h) + " hops: " + std::to_string(pairs[h]);
    return out.empty() ? "none" : out;
}

// Switches per level, leaves first.
std::map<std::size_t, std::size_t> switches_per_level(const Fabric& f, const std::vector<std::uint8_t>& level) {
    std::map<std::size_t, std::size_t> out;
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i)
        if (f.nodes()[i].kind == FabricNodeKind::Switch) ++out[level[i]];
    return out;
}

std::string levels_text(const Fabric& f, const std::vector<std::uint8_t>& level) {
    std::string out;
    for (const auto& [l, n] : switches_per_level(f, level))
        out += (out.empty() ? "" : ", ") + (l == 0 ? std::string("no host below") : "level " + std::to_string(l)) +
               ": " + std::to_string(n);
    return out;
}
}  // namespace

std::string render_fabric_summary(const Fabric& f, const std::string& source) {
    const std::vector<std::uint8_t> level = switch_levels(f);
    std::size_t levels = 0;
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i)
        if (f.nodes()[i].kind == FabricNodeKind::Switch) levels = std::max<std::size_t>(levels, level[i]);
    std::string out = "Fabric " + terminal_safe(source) + ": " + counted(f.count(FabricNodeKind::Switch), "switch") +
                      " in " + counted(levels, "level") + ", " + counted(f.count(FabricNodeKind::Adapter), "adapter") +
                      ", " + counted(f.links().size(), "cable") + "\n";
    out += "  switches per level (1: leaves): " + levels_text(f, level) + "\n";
    // Hosts per leaf switch, folded: "18 hosts: 12 leaf switches".
    std::map<std::size_t, std::size_t> leaves_by_hosts;
    std::vector<std::pair<std::size_t, std::uint32_t>> leaves;
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i) {
        if (f.nodes()[i].kind != FabricNodeKind::Switch || level[i] != 1) continue;
        std::size_t hosts = 0;
        for (const auto* nb = f.neighbours_begin(i); nb != f.neighbours_end(i); ++nb)
            if (f.nodes()[nb->node].kind == FabricNodeKind::Adapter) ++hosts;
        ++leaves_by_hosts[hosts];
        leaves.emplace_back(hosts, i);
    }
    out += "  hosts per leaf switch:";
    for (auto it = leaves_by_hosts.rbegin(); it != leaves_by_hosts.rend(); ++it)
        out += " " + counted(it->first, "host") + " under " + counted(it->second, "switch") + ";";
    out += "\n";
    std::stable_sort(leaves.begin(), leaves.end(), [](auto& a, auto& b) { return a.first > b.first; });
    constexpr std::size_t kListed = 40;
    for (std::size_t i = 0; i < leaves.size() && i < kListed; ++i)
        out += "    " + terminal_safe(switch_label(f, leaves[i].second)) + " (" + format_guid(f.nodes()[leaves[i].second].guid) +
               "): " + counted(leaves[i].first, "host") + "\n";
    if (leaves.size() > kListed) out += "    ... and " + std::to_string(leaves.size() - kListed) + " more leaf switches\n";
    return out;
}

std::string render_network_text(const NetworkReport& r) {
    const Fabric& f = *r.fabric;
    const NetworkFootprint& fp = *r.footprint;
    const FabricJoin& join = *r.join;
    std::string out = "Network (" + terminal_safe(r.source) + "): " + counted(f.count(FabricNodeKind::Switch), "switch") +
                      " in " + counted(fp.levels, "level") + ", " + counted(f.count(FabricNodeKind::Adapter), "adapter") +
                      ", " + counted(f.links().size(), "cable");
    if (r.forwarding_tables > 0) out += ", " + counted(r.forwarding_tables, "forwarding table");
    out += "\n";
    std::map<JoinMethod, std::size_t> by_method;
    for (const JoinedNode& j : join.joined) ++by_method[j.method];
    out += "  nodes placed: " + std::to_string(join.joined.size()) + " of " +
           std::to_string(join.joined.size() + join.unjoined.size());
    std::string how;
    for (const auto& [m, n] : by_method) how += (how.empty() ? "" : ", ") + std::to_string(n) + " by " + std::string(to_string(m));
    if (!how.empty()) out += " (" + how + ")";
    out += "\n";
    constexpr std::size_t kListed = 20;
    for (std::size_t i = 0; i < join.unjoined.size() && i < kListed; ++i)
        out += "    not placed: " + terminal_safe(join.unjoined[i].host) + ": " + terminal_safe(join.unjoined[i].reason) + "\n";
    if (join.unjoined.size() > kListed) out += "    ... and " + std::to_string(join.unjoined.size() - kListed) + " more\n";
    out += "  leaf switches: " + std::to_string(fp.leaves_used.size()) + " used";
    if (fp.capacity_known) out += ", " + std::to_string(fp.leaves_needed) + " needed";
    out += " (of " + std::to_string(fp.leaf_switches) + " in the fabric)\n";
    for (std::size_t i = 0; i < fp.leaves_used.size() && i < kListed; ++i) {
        const LeafUse& l = fp.leaves_used[i];
        out += "    " + terminal_safe(switch_label(f, l.switch_node)) + ": " + counted(l.job_nodes, "node") + " of the job";
        if (fp.capacity_known) out += " (" + counted(l.capacity, "host") + " under it)";
        out += "\n";
    }
    if (fp.leaves_used.size() > kListed) out += "    ... and " + std::to_string(fp.leaves_used.size() - kListed) + " more\n";
    out += "  hops between " + counted(fp.pairs(), "pair") + " of nodes, shortest paths: " + histogram_text(fp.hop_pairs);
    if (fp.unreachable_pairs) out += ", unreachable: " + std::to_string(fp.unreachable_pairs);
    out += "\n";
    if (!fp.routed_hop_pairs.empty() || fp.unrouted_pairs != 0) {
        out += "  hops along the forwarding tables: " + histogram_text(fp.routed_hop_pairs);
        if (fp.unrouted_pairs) out += ", no route read: " + std::to_string(fp.unrouted_pairs);
        out += "\n";
    }
    out += "  crossed: " + counted(fp.switches_crossed.size(), "switch") + " and " +
           counted(fp.links_crossed.size(), "cable") + " on shortest paths";
    if (!fp.routed_links_crossed.empty())
        out += "; " + counted(fp.routed_switches_crossed.size(), "switch") + " and " +
               counted(fp.routed_links_crossed.size(), "cable") + " on the real routes";
    out += "\n";
    for (const std::string& n : r.notes) out += "  note: " + terminal_safe(n) + "\n";
    return out;
}

}  // namespace stacksage
