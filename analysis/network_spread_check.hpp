// network-spread: how many leaf switches a job's nodes hang from, against
// the fewest that could hold them. Information, with the hop counts; a
// warning when the nodes span more than twice the leaf switches needed (the
// job's messages cross more of the fabric, and share its upper links with
// other jobs, than its size asks for). The remedy asks Slurm to keep the
// job under that many switches (sbatch --switches=N), or, without Slurm,
// gives the launcher a host file ordered switch by switch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/network_footprint.hpp"
#include "core/fabric.hpp"

namespace stacksage {

// The ratio of leaf switches used to needed above which the finding warns.
inline constexpr std::size_t kNetworkSpreadWarningRatio = 2;

// \return the finding; std::nullopt for a job of fewer than two joined
//         nodes. When fewer leaves would do, its hosts list the joined
//         nodes switch by switch (hosts_by_leaf_switch): the host file.
std::optional<Finding> check_network_spread(const Fabric& fabric, const NetworkFootprint& footprint,
                                            const FabricJoin& join);

// The joined hosts ordered leaf switch by leaf switch (fullest first), for
// a host file that keeps neighbours on the network together.
std::vector<std::string> hosts_by_leaf_switch(const Fabric& fabric, const FabricJoin& join);

// A switch's name for people: its node description, or its GUID.
std::string switch_label(const Fabric& fabric, std::uint32_t node);

}  // namespace stacksage
