// The error every hwloc topology load reports: the file, the reason, and
// what to do. Shared by the input checks and the loader.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace stacksage {

inline Error hwloc_load_error(const std::string& path, std::string_view reason, std::string_view what_to_do) {
    std::string message = "cannot load hwloc topology from '";
    message += path;
    message += "': ";
    message += reason;
    message += "; ";
    message += what_to_do;
    return make_error(std::move(message));
}

inline constexpr std::string_view kReexport = "export it again with `lstopo FILE.xml` (hwloc 2.x)";

}  // namespace stacksage
