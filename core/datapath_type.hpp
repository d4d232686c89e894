// Types of DataPaths: typed edges between any two components.
//
// Built-in types have fixed numbers (they are stored in files); names chosen
// by users are interned by the model and numbered from kFirstUserDataPathType.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stacksage {

enum class DataPathType : std::uint32_t {
    Physical = 0,        // a physical connection (bus, link)
    Logical = 1,         // a logical relation without a better type
    MayRunOn = 2,        // flow -> PU: the flow's affinity allowed it (time interval in attributes)
    RanOn = 3,           // flow -> PU: the flow was seen running there (sample counts)
    MemoryAccess = 4,    // PU -> cache/NUMA that served sampled accesses
    NumaDistance = 5,    // hwloc distance matrix entry (latency or relative distance)
    MemoryAttribute = 6, // hwloc memattr: initiator -> NUMA node bandwidth/latency
    GpuLink = 7,         // NVLink and similar, with bandwidth
    NetworkLink = 8,     // a network cable (netloc)
};

inline constexpr std::uint32_t kBuiltinDataPathTypeCount = 9;
inline constexpr std::uint32_t kFirstUserDataPathType = 1024;

// Name of a built-in type ("MayRunOn"), or empty for user types: the model
// knows those (Model::datapath_type_name).
std::string_view builtin_datapath_type_name(DataPathType type);
std::optional<DataPathType> builtin_datapath_type_from_name(std::string_view name);

enum class Direction : std::uint8_t {
    Out,  // paths whose source is the component
    In,   // paths whose target is the component
};

}  // namespace stacksage
