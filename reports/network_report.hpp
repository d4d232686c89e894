// What the reports render about the job on the network (`stacksage report
// --network`, or Slurm's switch tree): the fabric, how the run's nodes were
// joined to it, and the footprint. docs/network.md describes each part.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/fabric_join.hpp"
#include "analysis/network_footprint.hpp"
#include "core/fabric.hpp"
#include "core/model.hpp"

namespace stacksage {

struct NetworkReport {
    const Fabric* fabric = nullptr;
    const FabricJoin* join = nullptr;
    const NetworkFootprint* footprint = nullptr;
    std::string source;              // the file or directory read, or "SLURM_TOPOLOGY_ADDR"
    std::vector<std::string> notes;  // what reading the fabric noted
    std::size_t forwarding_tables = 0;
};

// The text report's "Network" section.
std::string render_network_text(const NetworkReport& report);

// The JSON report's "network" member (docs/report-json.md).
nlohmann::json network_to_json(const NetworkReport& report);

// The HTML page's network section: the fabric as a tree of switch levels
// (top level first, leaves last), the job's leaf switches, switches and
// cables highlighted; an SVG drawn here, escaped, with no script.
std::string render_network_html(const NetworkReport& report);

// The fabric as a Model: a Topology root "fabric", switches (Chip
// "ib-switch") and adapters (Chip "ib-adapter") under it with guid, lid,
// level, host attributes, cables as NetworkLink DataPaths (width, speed,
// bandwidth in bytes/s); with a footprint, job=1 on the job's adapters and
// on the switches and cables its paths cross.
Model network_to_model(const NetworkReport& report);

// The summary `stacksage topo --network` prints: levels, switch counts per
// level, hosts per leaf switch.
std::string render_fabric_summary(const Fabric& fabric, const std::string& source);

}  // namespace stacksage
