// Programs LD_PRELOAD cannot enter, found before the command starts.
//
// The recorder is loaded by the dynamic loader, which a program may not have
// (statically linked: no PT_INTERP in its ELF header) or may run in
// secure-execution mode, where it ignores LD_PRELOAD: a set-user-ID or
// set-group-ID program run by someone other than its owner or group, a
// program with file capabilities (the security.capability attribute) run by
// anyone but root. Such a run recorded "0 processes" with no reason; now
// `stacksage run` says which program, why, and what to do, before it starts
// the command (which still runs, untraced), and writes the same into
// run.json for `stacksage report` (parsers/run_directory.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stacksage::cli {

struct UnrecordableProgram {
    std::string program;  // the path found (PATH searched for a bare name)
    std::string reason;   // "static", "setuid", "setgid", "capabilities"
    std::string message;  // "... cannot be recorded: ...; <what to do>"
};

// \param program a command's first word, as given.
// \return why the recorder cannot enter it; std::nullopt when it can, or
//         when the file cannot be read (the command's own error says why).
std::optional<UnrecordableProgram> check_recordable(const std::string& program);

// The command's program, and where the command is a launcher (mpirun, srun,
// ...) the program it starts: the ones that cannot be recorded.
std::vector<UnrecordableProgram> unrecordable_programs(const std::vector<std::string>& command);

}  // namespace stacksage::cli
