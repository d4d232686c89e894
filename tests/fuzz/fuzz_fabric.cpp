// The fabric readers (both ibnetdiscover forms, ibroute tables, the GUID
// map): any text is read or refused with a message naming the line; never a
// crash, a hang or memory out of proportion to the input. What is read is
// then walked as the footprint walks it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/fabric_join.hpp"
#include "analysis/network_footprint.hpp"
#include "parsers/fabric_loader.hpp"
#include "parsers/network_map.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace stacksage;
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    Fabric fabric;
    std::vector<std::string> notes;
    Status s = read_fabric_text(text, "fuzz", "", fabric, notes);
    if (!s && s.error().message.rfind("fuzz", 0) != 0) std::abort();  // every error names the input
    // A second pass reads the same text as ibroute tables into what was read.
    (void)read_fabric_text(text, "fuzz", "", fabric, notes);
    fabric.finish();
    std::vector<HostFabricIds> hosts;
    for (const FabricNode& n : fabric.nodes())
        if (n.kind == FabricNodeKind::Adapter && hosts.size() < 64)
            hosts.push_back(HostFabricIds{std::string(description_host(n.description)), n.port_guids, {}});
    auto map = parse_network_map(text, "fuzz");
    const FabricJoin join = join_hosts(fabric, hosts, map ? *map : std::vector<NetworkMapEntry>{});
    const NetworkFootprint fp = compute_network_footprint(fabric, join);
    if (fp.pairs() > hosts.size() * hosts.size()) std::abort();
    return 0;
}
