// A recorded command line (argv) as one line of text, quoted the way a
// POSIX shell would read it back: the run's command (run.json) and each
// process's cmdline attribute in the run model.
#pragma once

#include <string>
#include <vector>

namespace stacksage {

// The words joined by spaces; a word that is empty or holds a blank, a quote
// or '$' goes in single quotes (a quote inside as '\'').
std::string join_command(const std::vector<std::string>& args);

}  // namespace stacksage
