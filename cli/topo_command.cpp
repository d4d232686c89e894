// `stacksage topo`: the topology model of this machine or of an hwloc XML file.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <memory>

#include "cli/commands.hpp"
#include "core/model_json.hpp"
#include "core/model_print.hpp"
#include "parsers/hwloc_loader.hpp"

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
};

int run_topo(const TopoOptions& o) {
    // `--input ""` (an unset variable in a script) names no file: it must not
    // quietly mean "this machine".
    if (o.input_given && o.input.empty()) {
        fmt::print(stderr,
                   "stacksage topo: --input is empty: give the path of an hwloc XML file, or leave --input out to "
                   "discover this machine\n");
        return kExitUsage;
    }
    HwlocLoadOptions load;
    load.include_io = o.include_io;
    Result<Model> model = o.input.empty() ? discover_this_machine(load) : load_hwloc_xml(o.input, load);
    if (!model) {
        fmt::print(stderr, "stacksage topo: {}\n", model.error().message);
        return kExitUsage;
    }
    if (o.format == "json") {
        fmt::print("{}\n", model_to_json(*model).dump(1));
        return kExitOk;
    }
    PrintOptions print;
    print.max_depth = o.max_depth;
    print.show_attributes = o.show_attributes;
    print.fold_alike_siblings = o.fold;
    for (ComponentId root : model->roots())
        if (!is_software(model->type(root))) fmt::print("{}", print_subtree(*model, root, print));
    return kExitOk;
}
}  // namespace

CommandRunner add_topo_command(CLI::App& app) {
    auto options = std::make_shared<TopoOptions>();
    CLI::App* topo = app.add_subcommand("topo", "Print the topology model of this machine or of an hwloc XML file");
    CLI::Option* input =
        topo->add_option("-i,--input", options->input, "hwloc XML file (default: discover this machine)");
    topo->add_option("-f,--format", options->format, "Output format")
        ->check(CLI::IsMember({"text", "json"}));
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
