// Attribute keys known to every model.
//
// Keys are interned strings; these are interned first, in this order, by every
// Model, so their numbers are constants. Any other name is interned on demand
// with Model::key().
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace stacksage {

using AttrKey = std::uint32_t;

namespace keys {
// Cpusets of hwloc objects.
inline constexpr AttrKey cpuset = 0;            // PUs this component covers and may use
inline constexpr AttrKey complete_cpuset = 1;   // PUs that exist, allowed or not (job-restricted topologies)
inline constexpr AttrKey nodeset = 2;           // NUMA nodes (as a set of OS indices)
// Caches.
inline constexpr AttrKey cache_level = 3;       // 1, 2, 3, ...
inline constexpr AttrKey cache_kind = 4;        // "data", "instruction", "unified"
inline constexpr AttrKey size_bytes = 5;        // cache size, or memory size of a NUMA node
inline constexpr AttrKey line_size = 6;
inline constexpr AttrKey associativity = 7;     // ways; -1 fully associative, 0 unknown
// CPU kinds (hybrid processors).
inline constexpr AttrKey cpukind = 8;           // index of the CPU kind, 0 = least efficient
inline constexpr AttrKey cpukind_efficiency = 9;
inline constexpr AttrKey core_type = 10;        // "IntelCore", "IntelAtom", ...
// Identity.
inline constexpr AttrKey hwloc_type = 11;       // hwloc's own type name ("Package", "PCIDev")
inline constexpr AttrKey logical_index = 12;    // hwloc logical index
inline constexpr AttrKey hostname = 13;
// DataPath attributes.
inline constexpr AttrKey start_ns = 14;         // time interval of MayRunOn/RanOn paths
inline constexpr AttrKey end_ns = 15;
inline constexpr AttrKey count = 16;            // samples aggregated into a path
inline constexpr AttrKey distance_name = 17;    // hwloc distances' name ("NUMALatency")
inline constexpr AttrKey value = 18;            // a raw value (relative distance, ...)
inline constexpr AttrKey pci_busid = 19;
inline constexpr AttrKey subtype = 20;          // hwloc subtype ("MCDRAM", "CXLMem")
inline constexpr AttrKey memattr_name = 21;     // "Bandwidth", "Latency", ...
inline constexpr AttrKey unit = 22;

inline constexpr std::array<std::string_view, 23> names = {
    "cpuset",      "complete_cpuset", "nodeset",      "cache_level",   "cache_kind",
    "size_bytes",  "line_size",       "associativity", "cpukind",      "cpukind_efficiency",
    "core_type",   "hwloc_type",      "logical_index", "hostname",     "start_ns",
    "end_ns",      "count",           "distance_name", "value",        "pci_busid",
    "subtype",     "memattr_name",    "unit",
};
}  // namespace keys

}  // namespace stacksage
