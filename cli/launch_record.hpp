// run.json's "launch": what `stacksage run` can tell of the job when the
// command it runs is a launcher (`stacksage run -- mpirun -np 4 --hostfile
// hosts ./app`): the ranks and hosts asked for, the host file's hosts read
// now, where the file is. The analyzer checks the recorded ranks and hosts
// against them (analysis/completeness_check.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "parsers/run_directory.hpp"

namespace stacksage::cli {

// \return the launch, or nullopt when the command is no launcher's. A host
//         file that cannot be read adds no host (the launcher itself says
//         why it cannot use it).
std::optional<LaunchRecord> launch_record_of(const std::vector<std::string>& command);

// The host names of an Open MPI or Hydra host file's text: the first word
// of each line ("n01 slots=4", "n02:4"), comments and blank lines skipped.
std::vector<std::string> hostfile_hosts(const std::string& text);

}  // namespace stacksage::cli
