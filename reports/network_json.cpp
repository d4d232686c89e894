#include "analysis/network_spread_check.hpp"
#include "reports/network_report.hpp"

namespace stacksage {

namespace {
nlohmann::json histogram_json(const std::vector<std::uint64_t>& pairs) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t h = 0; h < pairs.size(); ++h)
        if (pairs[h] != 0) out.push_back({{"hops", h}, {"pairs", pairs[h]}});
    return out;
}
nlohmann::json guid_list(const Fabric& f, const std::vector<std::uint32_t>& nodes) {
    nlohmann::json out = nlohmann::json::array();
    for (std::uint32_t n : nodes) out.push_back(format_guid(f.nodes()[n].guid));
    return out;
}
}  // namespace

nlohmann::json network_to_json(const NetworkReport& r) {
    const Fabric& f = *r.fabric;
    const NetworkFootprint& fp = *r.footprint;
    nlohmann::json j;
    j["source"] = r.source;
    j["switches"] = f.count(FabricNodeKind::Switch);
    j["adapters"] = f.count(FabricNodeKind::Adapter);
    j["links"] = f.links().size();
    j["levels"] = fp.levels;
    j["forwarding_tables"] = r.forwarding_tables;
    nlohmann::json joined = nlohmann::json::array();
    for (const JoinedNode& n : r.join->joined) {
        nlohmann::json adapters = nlohmann::json::array();
        for (std::uint32_t a : n.adapters) adapters.push_back(format_guid(f.nodes()[a].guid));
        joined.push_back({{"host", n.host}, {"method", std::string(to_string(n.method))}, {"adapters", adapters}});
    }
    j["joined"] = std::move(joined);
    nlohmann::json unjoined = nlohmann::json::array();
    for (const UnjoinedNode& n : r.join->unjoined) unjoined.push_back({{"host", n.host}, {"reason", n.reason}});
    j["unjoined"] = std::move(unjoined);
    nlohmann::json leaves = nlohmann::json::array();
    for (const LeafUse& l : fp.leaves_used) {
        nlohmann::json leaf = {{"switch", switch_label(f, l.switch_node)},
                               {"guid", format_guid(f.nodes()[l.switch_node].guid)},
                               {"job_nodes", l.job_nodes}};
        leaf["capacity"] = fp.capacity_known ? nlohmann::json(l.capacity) : nlohmann::json(nullptr);
        leaves.push_back(std::move(leaf));
    }
    j["leaf_switches"] = {{"in_fabric", fp.leaf_switches},
                          {"used", fp.leaves_used.size()},
                          {"needed", fp.capacity_known ? nlohmann::json(fp.leaves_needed) : nlohmann::json(nullptr)},
                          {"list", std::move(leaves)}};
    j["hops"] = {{"pairs", fp.pairs()},
                 {"max", fp.max_hops()},
                 {"mean", fp.mean_hops()},
                 {"shortest", histogram_json(fp.hop_pairs)},
                 {"unreachable_pairs", fp.unreachable_pairs}};
    if (f.has_forwarding_tables()) {
        j["hops"]["routed"] = histogram_json(fp.routed_hop_pairs);
        j["hops"]["unrouted_pairs"] = fp.unrouted_pairs;
    }
    j["crossed"] = {{"switches", guid_list(f, fp.switches_crossed)},
                    {"links", fp.links_crossed.size()},
                    {"routed_switches", guid_list(f, fp.routed_switches_crossed)},
                    {"routed_links", fp.routed_links_crossed.size()}};
    j["notes"] = r.notes;
    return j;
}

}  // namespace stacksage
