// `stacksage report --network FILE [--network-map FILE]`: the fabric read
// (parsers/fabric_loader.hpp), the run's nodes joined to it
// (analysis/fabric_join.hpp: by the GUIDs of their topology.xml, their host
// names, the map file), the footprint and its network-spread finding
// (analysis/network_footprint.hpp, network_spread_check.hpp). Without
// --network, the switch tree of Slurm's SLURM_TOPOLOGY_ADDR is used when the
// run's processes kept one.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "analysis/fabric_join.hpp"
#include "analysis/network_footprint.hpp"
#include "cli/analysis_pipeline.hpp"
#include "core/fabric.hpp"
#include "core/result.hpp"
#include "reports/network_report.hpp"

namespace stacksage::cli {

struct NetworkInputs {
    std::string network;      // --network: a fabric file or netloc directory; "" none
    std::string network_map;  // --network-map: "GUID hostname" lines; "" none
};

// Adds --network and --network-map to a command that analyses a run
// (report, check), filling `inputs`.
void add_network_options(CLI::App& command, NetworkInputs& inputs);

// Owns what the report's NetworkReport points into.
struct NetworkAnalysis {
    Fabric fabric;
    FabricJoin join;
    NetworkFootprint footprint;
    NetworkReport report;
};

// The hosts of the run with the GUIDs their topology.xml names (read only
// where the file mentions a NodeGUID: hwloc is not started for nodes
// without an InfiniBand adapter).
std::vector<HostFabricIds> run_host_fabric_ids(const AnalysedRun& run);

// Builds the network analysis and appends its finding to run.analysis.
// \return nullptr when there is nothing to analyse (no --network and no
//         Slurm switch tree).
// \return an Error when --network or --network-map cannot be read.
Result<std::unique_ptr<NetworkAnalysis>> analyse_network(const NetworkInputs& inputs, AnalysedRun& run);

}  // namespace stacksage::cli
