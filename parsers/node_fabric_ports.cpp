#include "parsers/node_fabric_ports.hpp"

#include <algorithm>

#include "parsers/hwloc_loader.hpp"

namespace stacksage {

std::vector<std::uint64_t> fabric_guids_of(const Model& topology) {
    std::vector<std::uint64_t> guids;
    for (ComponentId id : topology.components_of_type(ComponentType::Chip)) {
        if (topology.kind(id) != "openfabrics") continue;
        topology.for_each_attr(id, [&](AttrKey key, const AttributeValue& value) {
            const std::string_view name = topology.key_name(key);
            const auto* text = std::get_if<std::string>(&value);
            if (text == nullptr) return;
            // NodeGUID, and Port<n>GID<m> (not SysImageGUID: shared by a machine's adapters).
            const bool port_gid = name.starts_with("Port") && name.find("GID") != std::string_view::npos;
            if (name != "NodeGUID" && !port_gid) return;
            if (auto g = parse_guid(*text); g && *g != 0) guids.push_back(*g);
        });
    }
    std::sort(guids.begin(), guids.end());
    guids.erase(std::unique(guids.begin(), guids.end()), guids.end());
    return guids;
}

Result<std::vector<std::uint64_t>> read_node_fabric_guids(const std::string& xml_path) {
    HwlocLoadOptions options;
    options.include_io = true;
    Result<Model> model = load_hwloc_xml(xml_path, options);
    if (!model) return model.error();
    return fabric_guids_of(*model);
}

}  // namespace stacksage
