#include "parsers/code_location/code_location.hpp"

#include <fmt/core.h>

namespace stacksage {

std::string_view to_string(CodeGap gap) {
    switch (gap) {
    case CodeGap::None: return "none";
    case CodeGap::NoLineInfo: return "no_line_info";
    case CodeGap::Stripped: return "stripped";
    case CodeGap::NoFile: return "no_file";
    case CodeGap::BuildIdMismatch: return "build_id_mismatch";
    case CodeGap::AnonExec: return "anon_exec";
    case CodeGap::Vdso: return "vdso";
    case CodeGap::UnreadableMapping: return "unreadable_mapping";
    case CodeGap::NoModule: return "no_module";
    }
    return "none";
}

std::string_view explain(CodeGap gap) {
    switch (gap) {
    case CodeGap::None: return "resolved to function and line";
    case CodeGap::NoLineInfo:
        return "the module has no line information (built without -g, or its debug package is not installed): "
               "function only";
    case CodeGap::Stripped: return "the module is stripped (no symbol for the address): module and offset only";
    case CodeGap::NoFile: return "the module's file is not on this machine or cannot be read: module and offset only";
    case CodeGap::BuildIdMismatch:
        return "the file at the module's path is another build than the one that ran (build id differs): module "
               "and offset only";
    case CodeGap::AnonExec: return "the code lies in an anonymous executable mapping (JIT code): no symbols";
    case CodeGap::Vdso: return "the code lies in the kernel's vDSO";
    case CodeGap::UnreadableMapping: return "the recorder could not read the mapping's file: module and offset only";
    case CodeGap::NoModule: return "the address lies in no mapping the recorder saw";
    }
    return "";
}

std::string_view base_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string CodeLocation::source() const {
    if (file.empty() || line <= 0) return "";
    return fmt::format("{}:{}", base_name(file), line);
}

std::string CodeLocation::label() const {
    if (!function.empty()) {
        if (line > 0) return fmt::format("{} ({})", function, source());
        return fmt::format("{} in {}", function, base_name(module));
    }
    if (!module.empty()) return fmt::format("{}+{:#x}", base_name(module), offset);
    return fmt::format("{:#x}", address);
}

}  // namespace stacksage
