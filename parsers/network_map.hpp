// The map file of `stacksage report --network-map`: which host an adapter
// belongs to, where neither the node's topology (its OpenFabrics GUIDs) nor
// the adapter's node description names it. One "GUID hostname" pair a line;
// '#' starts a comment; the GUID as ibnetdiscover or hwloc writes it
// ("0x0002c903000b2f73", "0002:c903:000b:2f73").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

// \return the pairs, in file order.
// \return an Error naming name:line when a line is not "GUID hostname".
Result<std::vector<NetworkMapEntry>> parse_network_map(std::string_view text, std::string_view name);

// Reads the file at path (a regular file of at most 64 MiB).
Result<std::vector<NetworkMapEntry>> load_network_map(const std::string& path);

}  // namespace stacksage
