// Loading a fabric for `stacksage report --network` and `stacksage topo
// --network`: a file in either form ibnetdiscover writes (the topology file,
// or the ports report -p), told apart by content, or a directory as netloc's
// netloc_ib_gather_raw left it:
//
//   DIR[/ib-raw]/ib-subnet-<prefix>.txt                      one ports report per subnet
//   DIR[/ib-raw]/ibroutes-<prefix>/ibroute-<prefix>-<lid>.txt  the switches' forwarding tables
//
// Slurm's topology.conf (parsers/slurm_topology_conf.hpp) is read too: the
// switch tree the scheduler knows, when the fabric itself is not at hand.
// A file named ib-subnet-<prefix>.txt also brings the ibroutes-<prefix>/
// folder beside it. Every file goes through parsers/input_file.hpp (no
// FIFO, device or oversized file is read).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

struct LoadedFabric {
    Fabric fabric;                   // finish()ed
    std::vector<std::string> notes;  // forwarding tables cut short or left out
    std::size_t forwarding_tables = 0;
};

// The most bytes read from one fabric file: a ports report is about 150
// bytes per port, so this holds fabrics of millions of ports.
inline constexpr std::uint64_t kMaxFabricFileBytes = std::uint64_t{1} << 30;

// \return the fabric, with notes.
// \return an Error naming the file (and line) that cannot be read, or saying
//         that the path holds no fabric.
Result<LoadedFabric> load_fabric(const std::string& path);

// Reads text in either ibnetdiscover form (or an ibroute table, into a
// fabric already holding its switches) into fabric; name for messages.
Status read_fabric_text(std::string_view text, std::string_view name, std::string_view subnet, Fabric& fabric,
                        std::vector<std::string>& notes);

}  // namespace stacksage
