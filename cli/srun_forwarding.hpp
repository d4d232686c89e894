// Carrying the recorder through Slurm's launchers: srun, salloc, sbatch.
//
// srun exports the caller's whole environment to the tasks by default, so
// LD_PRELOAD and STACKSAGE_OUTPUT reach them. But `--export=NONE` (and NIL),
// `--export=VAR,...` (only SLURM_* and the variables listed) and the same
// settings from SRUN_EXPORT_ENV or SLURM_EXPORT_ENV (which `sbatch
// --export=NONE` leaves in a batch job for its steps) drop them: the tasks
// ran untraced and the run recorded "0 processes". Slurm 22.05's rules
// (srun(1), sbatch(1)), which this follows:
//   - the last --export on the command line wins; without one, srun reads
//     SRUN_EXPORT_ENV, then SLURM_EXPORT_ENV; sbatch reads SBATCH_EXPORT
//     (and #SBATCH lines of the script, which the command line overrides);
//   - ALL anywhere in the list: the whole environment goes, and it takes
//     precedence over NAME=value entries (nothing to do: ours are in it);
//   - NONE or NIL first: nothing of the user's environment goes, and no
//     variable may be listed with it (srun ignores them);
//   - otherwise a list: SLURM_* and the listed names (with the caller's
//     value) or NAME=value entries.
// The rewrite keeps what the user asked for and adds only the recorder's
// variables: NONE/NIL becomes the list of the recorder's variables alone
// (LD_PRELOAD=<the recorder>, not the user's own preloads, which NONE would
// have dropped); a list gets them appended (a listed LD_PRELOAD=value gets
// the recorder in front). Where the setting came from the environment, that
// variable is rewritten, so the steps of an allocation inherit the fix.
//
// salloc runs its command on the submit host with the caller's environment:
// a command that is srun is rewritten as above. sbatch's --export is
// rewritten the same way; sbatch returns when the job is queued (unless
// --wait), which the notes say before the job starts.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stacksage::cli {

// What the recorder needs in a task's environment.
struct RecorderVariables {
    // The recorder's own LD_PRELOAD entries (with no preload of the user's).
    std::string preload;
    // Variables carried by name, with the value `stacksage run` set
    // (STACKSAGE_OUTPUT, STACKSAGE_TOPOLOGY, ...).
    std::vector<std::string> names;
};

struct EnvironmentChange {
    std::string name;
    std::string value;
};

struct SlurmForwarding {
    std::vector<std::string> command;            // the command to run instead
    std::vector<EnvironmentChange> environment;  // set before running it
    std::vector<std::string> notes;              // said before the job starts
};

// Reads a variable of the environment the command will get; nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view)>;

// The launcher this command is, by its program's base name: "srun",
// "salloc", "sbatch", or "" for any other.
std::string slurm_launcher_of(const std::vector<std::string>& command);

// For a command that starts with srun, salloc or sbatch: the command and
// environment that carry `recorder` to every task, and what to tell the
// user. nullopt for any other command (nothing to change).
std::optional<SlurmForwarding> forward_through_slurm(const std::vector<std::string>& command,
                                                     const EnvironmentLookup& environment,
                                                     const RecorderVariables& recorder);

// The --export value (or SLURM_EXPORT_ENV ...) `value`, rewritten so that
// the recorder's variables travel; unchanged when they already do (ALL).
std::string export_value_with_recorder(std::string_view value, const RecorderVariables& recorder);

}  // namespace stacksage::cli
