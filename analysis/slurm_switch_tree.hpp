// The switch tree Slurm's topology/tree plugin gives each task, where no
// fabric file is given: SLURM_TOPOLOGY_ADDR names the switches from the top
// of the tree down to the node ("s2.s0.node01"), SLURM_TOPOLOGY_ADDR_PATTERN
// what each part is ("switch.switch.node"). The recorder keeps both in each
// process's identity (core/formats/launcher_environment.hpp); no privilege
// is needed. The tree holds the job's own nodes only: each becomes an
// adapter (FabricNode::host set) under its leaf switch.
#pragma once

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/run_view.hpp"
#include "core/fabric.hpp"

namespace stacksage {

struct SlurmTopologyAddress {
    std::string_view host;
    std::string_view address;  // SLURM_TOPOLOGY_ADDR
    std::string_view pattern;  // SLURM_TOPOLOGY_ADDR_PATTERN
};

// Each node's address, from the first of its processes that kept one.
std::vector<SlurmTopologyAddress> slurm_topology_addresses(const RunView& view);

// The tree the addresses describe, finish()ed; std::nullopt when no address
// names a switch (Slurm without topology/tree gives "node01", "node").
std::optional<Fabric> slurm_switch_tree(const std::vector<SlurmTopologyAddress>& addresses);

}  // namespace stacksage
