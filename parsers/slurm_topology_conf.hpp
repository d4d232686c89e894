// Slurm's topology.conf (topology/tree plugin), which users can read on
// every cluster that uses it (/etc/slurm/topology.conf): the switch tree
// the scheduler packs jobs by.
//
//   SwitchName=s1 Nodes=node[01-18]
//   SwitchName=s2 Nodes=node[19-36] LinkSpeed=100
//   SwitchName=top Switches=s[1-2]
//
// Each switch becomes a fabric switch, each node an adapter whose node
// description is the node's name (so the join places the run's nodes by
// name), each Nodes= or Switches= member a cable. '#' starts a comment;
// keys are case-insensitive, as Slurm reads them; host lists are Slurm's
// (core/hostlist.hpp).
#pragma once

#include <string_view>

#include "core/fabric.hpp"
#include "core/result.hpp"

namespace stacksage {

// \return an Error naming name:line when a line is not SwitchName=... with
//         Nodes= or Switches=, names a switch twice, or gives a bad host list.
Status read_slurm_topology_conf(std::string_view text, std::string_view name, Fabric& fabric);

bool looks_like_slurm_topology_conf(std::string_view text);

}  // namespace stacksage
