#include <algorithm>

#include "reports/network_report.hpp"

namespace stacksage {

Model network_to_model(const NetworkReport& r) {
    const Fabric& f = *r.fabric;
    Model m;
    m.reserve(f.nodes().size() + 1, f.links().size(), f.nodes().size() * 5);
    const ComponentId root = m.add_component(ComponentType::Topology, kNoComponent, "fabric", r.source);
    const AttrKey guid = m.key("guid"), lid = m.key("lid"), level = m.key("level"), host = m.key("host"),
                  job = m.key("job"), width = m.key("width"), speed = m.key("speed"), port_a = m.key("source_port"),
                  port_b = m.key("target_port");
    std::vector<std::uint8_t> levels = r.footprint ? r.footprint->level : switch_levels(f);
    std::vector<ComponentId> ids(f.nodes().size());
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i) {
        const FabricNode& n = f.nodes()[i];
        const std::string_view kind = n.kind == FabricNodeKind::Switch  ? "ib-switch"
                                      : n.kind == FabricNodeKind::Adapter ? "ib-adapter"
                                                                          : "ib-router";
        ids[i] = m.add_component(ComponentType::Chip, root, kind, n.description);
        m.set_attr(ids[i], guid, std::string_view(format_guid(n.guid)));
        if (n.lid != 0) m.set_attr(ids[i], lid, static_cast<std::int64_t>(n.lid));
        if (n.kind == FabricNodeKind::Switch) m.set_attr(ids[i], level, static_cast<std::int64_t>(levels[i]));
        if (!n.host.empty()) m.set_attr(ids[i], host, std::string_view(n.host));
    }
    if (r.join)
        for (const JoinedNode& j : r.join->joined)
            for (std::uint32_t a : j.adapters) {
                m.set_attr(ids[a], host, std::string_view(j.host));
                m.set_attr(ids[a], job, std::int64_t{1});
            }
    std::vector<bool> link_on_path(f.links().size(), false);
    if (r.footprint) {
        for (std::uint32_t s : r.footprint->switches_crossed) m.set_attr(ids[s], job, std::int64_t{1});
        for (std::uint32_t l : r.footprint->links_crossed) link_on_path[l] = true;
    }
    for (std::uint32_t i = 0; i < f.links().size(); ++i) {
        const FabricLink& l = f.links()[i];
        const double gbits = lane_gbits(l.speed) * l.width;
        const DataPathId d = m.add_datapath(ids[l.a], ids[l.b], DataPathType::NetworkLink, false,
                                            gbits > 0 ? gbits * 1e9 / 8 : Model::kUnknown);
        m.set_attr(d, port_a, static_cast<std::int64_t>(l.port_a));
        m.set_attr(d, port_b, static_cast<std::int64_t>(l.port_b));
        if (l.width != 0) m.set_attr(d, width, static_cast<std::int64_t>(l.width));
        if (!l.speed.empty()) m.set_attr(d, speed, std::string_view(l.speed));
        if (link_on_path[i]) m.set_attr(d, job, std::int64_t{1});
    }
    return m;
}

}  // namespace stacksage
