// The topology file ibnetdiscover writes by default: blank-line separated
// records, one per switch, adapter (Ca) or router (Rt), each with its
// connected ports:
//
//   vendid=0x8f1
//   switchguid=0x8f10500108c9e(8f10500108c9e)
//   Switch  36 "S-0008f10500108c9e"   # "Voltaire 4036 # 4036-8C9E" enhanced port 0 lid 142 lmc 0
//   [14]  "H-78e7d1030024a7cc"[1](78e7d1030024a7cd)   # "mirage001 HCA-1" lid 137 4xQDR
//
//   caguid=0x78e7d1030024a7cc
//   Ca  2 "H-78e7d1030024a7cc"   # "mirage001 HCA-1"
//   [1](78e7d1030024a7cd)  "S-0008f10500108c9e"[14]   # lid 137 lmc 0 "Voltaire 4036 # 4036-8C9E" lid 142 4xQDR
//
// Comments (#), "Chassis"/"Non-Chassis Nodes" headers (-g) and the id lines
// (vendid=, devid=, sysimgguid=, *guid=) carry nothing the fabric needs
// beyond what the node and port lines say. Adapters are keyed by their node
// GUID, with their port GUIDs (what an hwloc topology names) indexed too.
#pragma once

#include <string_view>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

// Adds the records to fabric. name: the file, for messages.
// \return an Error naming name:line and what is wrong.
Status read_ibnetdiscover_topology(std::string_view text, std::string_view name, std::string_view subnet,
                                   Fabric& fabric);

// Whether the text looks like a topology file: its first line that is not a
// comment or blank is an id line or a node line.
bool looks_like_ibnetdiscover_topology(std::string_view text);

}  // namespace stacksage
