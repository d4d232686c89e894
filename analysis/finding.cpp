#include "analysis/finding.hpp"

namespace stacksage {

std::string_view to_string(Severity severity) {
    switch (severity) {
        case Severity::Info: return "info";
        case Severity::Warning: return "warning";
        case Severity::Error: return "error";
    }
    return "info";
}

std::int64_t Finding::figure(std::string_view name, std::int64_t fallback) const {
    for (const auto& [n, v] : figures)
        if (n == name) return v;
    return fallback;
}

}  // namespace stacksage
