#include "core/datapath_type.hpp"

#include <array>

namespace stacksage {

namespace {
constexpr std::array<std::string_view, kBuiltinDataPathTypeCount> kNames = {
    "Physical", "Logical", "MayRunOn", "RanOn", "MemoryAccess",
    "NumaDistance", "MemoryAttribute", "GpuLink", "NetworkLink",
};
}

std::string_view builtin_datapath_type_name(DataPathType type) {
    auto i = static_cast<std::uint32_t>(type);
    return i < kNames.size() ? kNames[i] : std::string_view();
}

std::optional<DataPathType> builtin_datapath_type_from_name(std::string_view name) {
    for (std::uint32_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == name) return static_cast<DataPathType>(i);
    return std::nullopt;
}

}  // namespace stacksage
