// The ports report of ibnetdiscover (`ibnetdiscover -p`), one line per port,
// with the progress lines of `-s` ("DR path ...") mixed in, as netloc's
// netloc_ib_gather_raw saved it (ib-raw/ib-subnet-<prefix>.txt):
//
//   CA 137  1 0x78e7d1030024a7cd 4x QDR - SW 142 14 0x0008f10500108c9e ( 'mirage001 HCA-1' - 'Voltaire 4036 # 4036-8C9E' )
//   SW 142 35 0x0008f10500108c9e 4x ???                                    'Voltaire 4036 # 4036-8C9E'
//
// Type (CA, SW, RT), LID, port, GUID (a CA's port GUID, a switch's node
// GUID), width and speed, then the peer's; a port with no peer ("???" or an
// active port whose peer was not discovered) declares its node only. Each
// cable is listed from both ends and stored once (core/fabric.hpp).
#pragma once

#include <string>
#include <string_view>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

// Adds what the report says to fabric (which may already hold other
// subnets). name: the file, for messages; subnet: the subnet prefix the
// LIDs belong to ("" when unknown).
// \return an Error naming name:line and what is wrong (the fabric then holds
//         what the lines before it said).
Status read_ibnetdiscover_ports(std::string_view text, std::string_view name, std::string_view subnet,
                                Fabric& fabric);

// Whether the text looks like a ports report: its first line that is not a
// progress line or blank starts with "CA", "SW" or "RT" and a LID.
bool looks_like_ibnetdiscover_ports(std::string_view text);

}  // namespace stacksage
