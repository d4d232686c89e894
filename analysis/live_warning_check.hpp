// The warnings the live watcher gave while the job ran (preload/
// live_watcher.hpp), shown in the report: one `live-warning` finding (Info)
// per node and condition, "Warned live at 5.1 s: over-subscribed: ...", the
// time counted from the node's first application process's start. The
// post-run checks judge the whole run on their own; this says what the user
// was already told, and when.
#pragma once

#include <vector>

#include "analysis/finding.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

std::vector<Finding> check_live_warnings(const RunView& view);

}  // namespace stacksage
