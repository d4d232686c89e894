// stacksage: how an HPC job really used the machine.
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <map>
#include <string>

#include "cli/commands.hpp"
#include "cli/help_sections.hpp"

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
    add_help_sections_and_version(app, STACKSAGE_VERSION);

    // CLI11 would call an unknown subcommand an "unexpected argument".
    if (argc > 1 && argv[1][0] != '-' && runners.find(argv[1]) == runners.end()) {
        std::string known;
        for (const auto& [name, runner] : runners) known += (known.empty() ? "" : ", ") + name;
        fmt::print(stderr, "stacksage: unknown subcommand '{}'; the subcommands are {} (stacksage --help)\n",
                   argv[1], known);
        return kExitUsage;
    }

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
