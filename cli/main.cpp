// stacksage: how an HPC job really used the machine.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>
#include <string>

#include "cli/commands.hpp"

int main(int argc, char** argv) {
    using namespace stacksage::cli;
    CLI::App app{"stacksage: how an HPC job really used the machine"};
    app.set_version_flag("--version", std::string("stacksage ") + STACKSAGE_VERSION);
    app.require_subcommand(1);

    // Subcommand name -> what runs it.
    std::map<std::string, CommandRunner> runners;
    runners["topo"] = add_topo_command(app);
    runners["run"] = add_run_command(app);
    runners["report"] = add_report_command(app);
    runners["check"] = add_check_command(app);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        // CLI11 returns 0 for --help/--version; every real usage error is ours: 2.
        return code == 0 ? kExitOk : kExitUsage;
    }
    for (const CLI::App* sub : app.get_subcommands())
        if (auto it = runners.find(sub->get_name()); it != runners.end()) return it->second();
    return kExitUsage;
}
