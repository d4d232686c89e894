// The InfiniBand GUIDs in a node's hwloc topology: each OpenFabrics OS
// device ("mlx4_0", "qib0") carries NodeGUID and, per port, Port<n>GID<m>
// (fe80:0000:0000:0000:<port GUID>) and Port<n>LID. ConnectX adapters'
// node GUID is their port GUID minus one, so both are kept: the fabric's
// adapters are matched on either (analysis/fabric_join.hpp).
#pragma once

#include <string>

#include "core/fabric.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

// The GUIDs named by the OpenFabrics components (Chip "openfabrics") of a
// topology loaded with its I/O devices.
std::vector<std::uint64_t> fabric_guids_of(const Model& topology);

// Loads the hwloc XML at path with its I/O devices and returns its GUIDs
// (empty when hwloc saw no InfiniBand adapter).
Result<std::vector<std::uint64_t>> read_node_fabric_guids(const std::string& xml_path);

}  // namespace stacksage
