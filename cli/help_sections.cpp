#include "cli/help_sections.hpp"

#include <CLI/CLI.hpp>

#include <initializer_list>
#include <string_view>

#include "core/formats/launcher_environment.hpp"

namespace stacksage::cli {

namespace {

const char* exit_status(const std::string& command) {
    if (command == "run")
        return "EXIT STATUS:\n"
               "  The command's own: its exit status, or killed by the same signal\n"
               "  (stacksage re-raises it).\n"
               "  2    a bad option, or -o names a directory that holds a run (the\n"
               "       command is not started)\n"
               "  126  the command could not be started\n"
               "  127  the command was not found";
    if (command == "check")
        return "EXIT STATUS:\n"
               "  0  no finding of the chosen severity\n"
               "  1  findings of the chosen severity (--fail-on), or input errors (a log\n"
               "     skipped, a topology unreadable: the analysis is incomplete)\n"
               "  2  a bad option, an unreadable run directory, or output that could not\n"
               "     be written (the message names it)";
    if (command.empty())
        return "EXIT STATUS:\n"
               "  0  success\n"
               "  1  `check`: findings of the chosen severity, or input errors\n"
               "  2  a bad option, an unknown subcommand, an unreadable input, or output\n"
               "     that could not be written\n"
               "  `run` ends as the command it ran did.";
    return "EXIT STATUS:\n"
           "  0  success\n"
           "  2  a bad option, an unreadable input, or output that could not be written\n"
           "     (the message names it)";
}

// "  A, B, C,\n  D\n": names joined by commas, in lines of at most 80 columns.
std::string variable_lines(std::initializer_list<const char*> first, const auto& rest) {
    constexpr std::size_t kWidth = 80;
    std::string out, line;
    auto add = [&](const char* name) {
        if (!line.empty() && line.size() + 2 + std::string_view(name).size() + 1 > kWidth) {
            out += line + ",\n";
            line.clear();
        }
        line += (line.empty() ? "  " : ", ") + std::string(name);
    };
    for (const char* name : first) add(name);
    for (const char* name : rest) add(name);
    return out + line + "\n";
}

std::string environment(const std::string& command) {
    if (command == "run")
        return "ENVIRONMENT:\n"
               "  STACKSAGE_PRELOAD  path of libstacksage-preload.so (default: found next to\n"
               "                     stacksage, in the build tree or in <prefix>/lib/stacksage)\n"
               "  TMPDIR             where a link to the recorder goes when its path holds a\n"
               "                     space or a colon, which LD_PRELOAD cannot carry\n" +
               variable_lines({formats::kSlurmJobVariable, formats::kSlurmStepVariable}, formats::kJobIdVariables) +
               "                     name the default output directory after the job\n" +
               variable_lines({}, formats::kRankVariables) +
               "                     under a launcher only rank 0 prints the summary\n"
               "  Set for the command (and read by the recorder): LD_PRELOAD, STACKSAGE_OUTPUT,\n"
               "  STACKSAGE_TOPOLOGY=0 (--no-topology), STACKSAGE_MODEL=0 (--no-model),\n"
               "  STACKSAGE_SAMPLE (--sample). STACKSAGE_QUIET=1 silences the recorder's notes.";
    if (command == "report")
        return "ENVIRONMENT:\n"
               "  NO_COLOR  when set, the terminal report has no colours";
    if (command.empty())
        return "ENVIRONMENT:\n"
               "  See each subcommand's --help (`stacksage run --help` lists the recorder's).";
    return "ENVIRONMENT:\n"
           "  None of its own.";
}

}  // namespace

std::string exit_status_and_environment(const std::string& command) {
    return std::string(exit_status(command)) + "\n\n" + environment(command);
}

void add_help_sections_and_version(CLI::App& app, const std::string& version) {
    auto append = [](CLI::App& to, const std::string& sections) {
        const std::string footer = to.get_footer();
        to.footer(footer.empty() ? sections : footer + "\n\n" + sections);
    };
    append(app, exit_status_and_environment(""));
    for (CLI::App* sub : app.get_subcommands({})) {
        sub->set_version_flag("--version", "stacksage " + sub->get_name() + " " + version);
        append(*sub, exit_status_and_environment(sub->get_name()));
    }
}

}  // namespace stacksage::cli
