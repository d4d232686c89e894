// Where libstacksage-preload.so is, for `stacksage run`.
#pragma once

#include <string>
#include <vector>

#include "core/result.hpp"

namespace stacksage::cli {

inline constexpr const char* kPreloadLibraryName = "libstacksage-preload.so";

// The places searched, in order: $STACKSAGE_PRELOAD when set (and then only
// it), the directory of the running `stacksage`, the build tree's
// ../preload, the install tree's <libdir>/stacksage (as configured, e.g.
// ../lib64/stacksage), ../lib/stacksage, ../lib and ../lib64.
std::vector<std::string> preload_candidates(const std::string& executable_dir);

// The absolute path of the preload library, or an error listing where it
// was looked for and how to point at it.
Result<std::string> find_preload_library();

}  // namespace stacksage::cli
