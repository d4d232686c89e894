// The subcommands of `stacksage`. Each add_*_command registers its options on
// the app and returns a function that runs it once parsing succeeded.
#pragma once

#include <functional>

namespace CLI { class App; }

namespace stacksage::cli {

// Exit codes shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFindings = 1;  // `check`: findings of the chosen severity exist
inline constexpr int kExitUsage = 2;     // bad option or unreadable input

using CommandRunner = std::function<int()>;

CommandRunner add_topo_command(CLI::App& app);
CommandRunner add_run_command(CLI::App& app);
CommandRunner add_report_command(CLI::App& app);
CommandRunner add_check_command(CLI::App& app);

}  // namespace stacksage::cli
