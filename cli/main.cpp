// stacksage: how an HPC job really used the machine.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>

#include <map>
#include <string>

#include "cli/command_output.hpp"
#include "cli/commands.hpp"
#include "cli/help_sections.hpp"

int main(int argc, char** argv) {
    using namespace stacksage::cli;
    hold_standard_descriptors();
    CLI::App app{"stacksage: how an HPC job really used the machine"};
    app.set_version_flag("--version", std::string("stacksage ") + STACKSAGE_VERSION);
    app.require_subcommand(1);

    // Subcommand name -> what runs it.
    std::map<std::string, CommandRunner> runners;
    runners["topo"] = add_topo_command(app);
    runners["run"] = add_run_command(app);
    runners["report"] = add_report_command(app);
    runners["check"] = add_check_command(app);
    add_help_sections_and_version(app, STACKSAGE_VERSION);

    // CLI11 would call an unknown subcommand an "unexpected argument".
    if (argc > 1 && argv[1][0] != '-' && runners.find(argv[1]) == runners.end()) {
        std::string known;
        for (const auto& [name, runner] : runners) known += (known.empty() ? "" : ", ") + name;
        CommandOutput output("stacksage");
        output.say("unknown subcommand '" + std::string(argv[1]) + "'; the subcommands are " + known +
                   " (stacksage --help)");
        return output.finish(kExitUsage);
    }

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        int code = app.exit(e);
        // --help and --version on a full or closed stdout: what was asked for is lost.
        std::cout.flush();
        if (!std::cout || standard_descriptor_was_closed(STDOUT_FILENO)) return kExitUsage;
        // CLI11 returns 0 for --help/--version; every real usage error is ours: 2.
        return code == 0 ? kExitOk : kExitUsage;
    }
    for (const CLI::App* sub : app.get_subcommands())
        if (auto it = runners.find(sub->get_name()); it != runners.end()) return it->second();
    return kExitUsage;
}
