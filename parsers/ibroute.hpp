// `ibroute <switch LID>`: a switch's unicast linear forwarding table, the
// output port for each destination LID (port 000: the switch itself):
//
//   Unicast lids [0x0-0x91] of switch Lid 2 guid 0x000b8cffff004939 (MT47396 Infiniscale-III Mellanox Technologies):
//     Lid  Out   Destination
//          Port     Info
//   0x0001 015 : (Channel Adapter portguid 0x0002c9030002da23: 'bonobo020 HCA-1')
//   ...
//   134 valid lids dumped
//
// The switch is found in the fabric by its LID in the subnet (its GUID
// where the LID is unknown). A dump that ibroute cut short ("iberror: ...
// failed") keeps the entries before it, with a note; a table for a switch
// the fabric lacks is left out with a note. Real routes
// (analysis/network_footprint.hpp) follow these tables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

// Reads one table into fabric (whose switches must already be read).
// notes: what was incomplete or left out, as sentences naming the file.
// \return an Error naming name:line when the text is not an ibroute table.
Status read_ibroute(std::string_view text, std::string_view name, std::string_view subnet, Fabric& fabric,
                    std::vector<std::string>& notes);

bool looks_like_ibroute(std::string_view text);

}  // namespace stacksage
