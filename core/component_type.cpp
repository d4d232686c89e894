#include "core/component_type.hpp"

#include <array>

namespace stacksage {

namespace {
constexpr std::array<std::string_view, kComponentTypeCount> kNames = {
    "Topology", "Node", "Chip", "Subdivision", "Numa", "Memory", "Storage",
    "Cache", "Core", "Thread", "Process", "Flow", "Generic",
};
}

std::string_view to_string(ComponentType type) {
    auto i = static_cast<std::size_t>(type);
    return i < kNames.size() ? kNames[i] : std::string_view("Unknown");
}

std::optional<ComponentType> component_type_from_string(std::string_view name) {
    for (std::size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == name) return static_cast<ComponentType>(i);
    return std::nullopt;
}

}  // namespace stacksage
