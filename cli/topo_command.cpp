// `stacksage topo`: the topology model of this machine or of an hwloc XML file.
#include <CLI/CLI.hpp>

#include <memory>

#include "cli/command_output.hpp"
#include "cli/commands.hpp"
#include "core/model_json.hpp"
#include "core/model_print.hpp"
#include "parsers/fabric_loader.hpp"
#include "parsers/hwloc_loader.hpp"
#include "reports/graphml_export.hpp"
#include "reports/network_report.hpp"
#include "reports/terminal_text.hpp"

namespace stacksage::cli {

namespace {
struct TopoOptions {
    std::string input;
    bool input_given = false;  // --input was on the command line (perhaps as "")
    std::string format = "text";
    bool include_io = false;
    int max_depth = -1;
    bool show_attributes = false;
    bool fold = false;
    std::string network;  // --network: print the fabric instead of a machine
};

// `stacksage topo --network FILE`: the fabric folded (levels, switch counts,
// hosts per leaf switch), or its GraphML / JSON model.
int run_topo_network(const TopoOptions& o, CommandOutput& output) {
    Result<LoadedFabric> loaded = load_fabric(o.network);
    if (!loaded) {
        output.say("--network: " + loaded.error().message);
        return output.finish(kExitUsage);
    }
    NetworkReport report;
    report.fabric = &loaded->fabric;
    report.source = o.network;
    if (o.format == "graphml") output.print(model_to_graphml(network_to_model(report)));
    else if (o.format == "json") output.print(model_to_json(network_to_model(report)).dump(1) + "\n");
    else output.print(render_fabric_summary(loaded->fabric, o.network));
    for (const std::string& note : loaded->notes) output.say(note);
    return output.finish(kExitOk);
}

int run_topo(const TopoOptions& o) {
    CommandOutput output("stacksage topo");
    if (!o.network.empty()) return run_topo_network(o, output);
    // `--input ""` (an unset variable in a script) names no file: it must not
    // quietly mean "this machine".
    if (o.input_given && o.input.empty()) {
        output.say("--input is empty: give the path of an hwloc XML file, or leave --input out to discover this "
                   "machine");
        return output.finish(kExitUsage);
    }
    HwlocLoadOptions load;
    load.include_io = o.include_io;
    Result<Model> model = o.input.empty() ? discover_this_machine(load) : load_hwloc_xml(o.input, load);
    if (!model) {
        output.say(model.error().message);
        return output.finish(kExitUsage);
    }
    if (o.format == "graphml") {
        output.print(model_to_graphml(*model));
        return output.finish(kExitOk);
    }
    if (o.format == "json") {
        output.print(model_to_json(*model).dump(1) + "\n");
        return output.finish(kExitOk);
    }
    PrintOptions print;
    print.max_depth = o.max_depth;
    print.show_attributes = o.show_attributes;
    print.fold_alike_siblings = o.fold;
    // Names and attributes come from the XML file: shown terminal-safe.
    for (ComponentId root : model->roots())
        if (!is_software(model->type(root))) output.print(terminal_safe_lines(print_subtree(*model, root, print)));
    return output.finish(kExitOk);
}
}  // namespace

CommandRunner add_topo_command(CLI::App& app) {
    auto options = std::make_shared<TopoOptions>();
    CLI::App* topo = app.add_subcommand("topo", "Print the topology model of this machine or of an hwloc XML file");
    CLI::Option* input =
        topo->add_option("-i,--input", options->input, "hwloc XML file (default: discover this machine)");
    topo->add_option("-f,--format", options->format, "Output format")
        ->check(CLI::IsMember({"text", "json", "graphml"}));
    topo->add_option("--network", options->network,
                     "Print the InfiniBand fabric of this `ibnetdiscover` output (or netloc raw directory, or Slurm's topology.conf) instead: "
                     "levels, switches, hosts per leaf switch (graphml: the whole fabric)");
    topo->add_flag("--io", options->include_io, "Include I/O devices (PCI, GPUs, NICs, disks)");
    topo->add_option("--max-depth", options->max_depth, "Print at most this many levels (text)");
    topo->add_flag("--attributes", options->show_attributes, "Print every attribute (text)");
    topo->add_flag("--fold", options->fold, "Print one of each run of alike siblings, then how many more (text)");
    return [options, input] {
        options->input_given = input->count() > 0;
        return run_topo(*options);
    };
}

}  // namespace stacksage::cli
