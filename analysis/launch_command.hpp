// What a launcher's command line says about the job it starts: how many
// ranks, on which hosts, and where the application's command begins
// (`mpirun -np 4 --host a,b:2 ./app`, `srun -n 8 -w n[01-02] ./app`,
// `mpiexec -n 4 -hosts a,b ./app`). Read from the launcher process's recorded
// command line and from the command in run.json, so that the analyzer knows
// the job's size even when its ranks left no log.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stacksage {

struct LaunchCommand {
    bool is_launcher = false;                // the command starts with mpirun, mpiexec, srun, ... (after env/paths)
    std::string launcher;                    // its base name: "mpirun", "srun", ...
    bool slurm = false;                      // srun
    std::int64_t ranks = -1;                 // -np / -n / --ntasks; -1: not given
    std::vector<std::string> hosts;          // --host / -H / -hosts / srun -w (slots stripped, host lists expanded)
    std::string hostfile;                    // --hostfile / --machinefile / -f
    bool export_none = false;                // srun --export=NONE (or a list without ALL): tasks do not get LD_PRELOAD
    std::vector<std::string> launcher_args;  // the launcher and its options
    std::vector<std::string> program_args;   // the application's command, from its first word
};

// Splits a command line as run_loader joins one (arguments separated by
// spaces, those with spaces or quotes in '...' with '\'' for a quote).
std::vector<std::string> split_command_line(std::string_view line);

// Reads a launcher's arguments. Options it does not know are skipped, with
// their value when they are known to take one; reading stops at the first
// word that is no option (the application), so the application's own "-n 5"
// is never taken for the launcher's.
LaunchCommand parse_launch_command(const std::vector<std::string>& args);

}  // namespace stacksage
