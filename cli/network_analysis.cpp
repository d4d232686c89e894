#include "cli/network_analysis.hpp"

#include "analysis/network_spread_check.hpp"
#include "analysis/slurm_switch_tree.hpp"
#include "core/formats/run_layout.hpp"
#include "parsers/fabric_loader.hpp"
#include "parsers/input_file.hpp"
#include "parsers/network_map.hpp"
#include "parsers/node_fabric_ports.hpp"

namespace stacksage::cli {

void add_network_options(CLI::App& command, NetworkInputs& inputs) {
    command.add_option("--network", inputs.network,
                       "The InfiniBand fabric: `ibnetdiscover` output (either form), netloc's raw directory, or Slurm's "
                       "topology.conf; adds where the job sat on the network (docs/network.md)");
    command.add_option("--network-map", inputs.network_map,
                       "With --network: a file of \"GUID hostname\" lines, for nodes whose topology and adapter "
                       "descriptions do not name each other");
}

std::vector<HostFabricIds> run_host_fabric_ids(const AnalysedRun& run) {
    std::vector<HostFabricIds> hosts;
    std::string text;
    for (const NodeSummary& n : run.analysis.nodes) {
        if (n.launch_host) continue;
        HostFabricIds h;
        h.host = n.host;
        const std::string xml = run.run.directory + "/" + n.host + "/" + formats::run_layout::kTopologyXml;
        if (auto problem = read_input_file(xml, input_limits::kTopologyXml, "an hwloc XML topology", text)) {
            h.topology_problem = "its topology could not be read (" + problem->reason + ")";
        } else if (text.find("NodeGUID") != std::string::npos) {
            Result<std::vector<std::uint64_t>> guids = read_node_fabric_guids(xml);
            if (guids) h.guids = std::move(*guids);
            else h.topology_problem = "its topology could not be loaded (" + guids.error().message + ")";
        }
        hosts.push_back(std::move(h));
    }
    return hosts;
}

Result<std::unique_ptr<NetworkAnalysis>> analyse_network(const NetworkInputs& inputs, AnalysedRun& run) {
    auto out = std::make_unique<NetworkAnalysis>();
    std::vector<NetworkMapEntry> map;
    if (!inputs.network_map.empty()) {
        Result<std::vector<NetworkMapEntry>> m = load_network_map(inputs.network_map);
        if (!m) return make_error("--network-map: " + m.error().message);
        map = std::move(*m);
    }
    std::vector<HostFabricIds> hosts;
    if (!inputs.network.empty()) {
        Result<LoadedFabric> loaded = load_fabric(inputs.network);
        if (!loaded) return make_error("--network: " + loaded.error().message);
        out->fabric = std::move(loaded->fabric);
        out->report.notes = std::move(loaded->notes);
        out->report.forwarding_tables = loaded->forwarding_tables;
        out->report.source = inputs.network;
        hosts = run_host_fabric_ids(run);
    } else {
        std::optional<Fabric> tree = slurm_switch_tree(slurm_topology_addresses(run.analysis.view));
        if (!tree) {
            if (!inputs.network_map.empty())
                return make_error("--network-map needs --network: the map joins hosts to a fabric file's adapters");
            return std::unique_ptr<NetworkAnalysis>();
        }
        out->fabric = std::move(*tree);
        out->report.source = "Slurm's switch tree (SLURM_TOPOLOGY_ADDR)";
        for (const NodeSummary& n : run.analysis.nodes)
            if (!n.launch_host) hosts.push_back(HostFabricIds{n.host, {}, {}});
    }
    out->join = join_hosts(out->fabric, hosts, map);
    out->footprint = compute_network_footprint(out->fabric, out->join);
    if (std::optional<Finding> f = check_network_spread(out->fabric, out->footprint, out->join))
        run.analysis.findings.push_back(std::move(*f));
    out->report.fabric = &out->fabric;
    out->report.join = &out->join;
    out->report.footprint = &out->footprint;
    return out;
}

}  // namespace stacksage::cli
