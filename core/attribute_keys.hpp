// Attribute keys known to every model.
//
// Keys are interned strings; these are interned first, in this order, by every
// Model, so their numbers are constants (snapshots rely on them). Each carries
// the type of its values (typed_key.hpp). Any other name is interned on demand
// with Model::key(); the run model's names are in run_model_schema.hpp.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/typed_key.hpp"

namespace stacksage {

namespace keys {
using Int = FixedKey<std::int64_t>;
using Text = FixedKey<std::string>;
using Set = FixedKey<Cpuset>;
// Cpusets of hwloc objects.
inline constexpr Set cpuset{0};             // PUs this component covers and may use
inline constexpr Set complete_cpuset{1};    // PUs that exist, allowed or not (job-restricted topologies)
inline constexpr Set nodeset{2};            // NUMA nodes (as a set of OS indices)
// Caches.
inline constexpr Int cache_level{3};        // 1, 2, 3, ...
inline constexpr Text cache_kind{4};        // "data", "instruction", "unified"
inline constexpr Int size_bytes{5};         // cache size, or memory size of a NUMA node
inline constexpr Int line_size{6};
inline constexpr Int associativity{7};      // ways; -1 fully associative, 0 unknown
// CPU kinds (hybrid processors).
inline constexpr Int cpukind{8};            // index of the CPU kind, 0 = least efficient
inline constexpr Int cpukind_efficiency{9};
inline constexpr Text core_type{10};        // "IntelCore", "IntelAtom", ...
// Identity.
inline constexpr Text hwloc_type{11};       // hwloc's own type name ("Package", "PCIDev")
inline constexpr Int logical_index{12};     // hwloc logical index
inline constexpr Text hostname{13};
// DataPath attributes.
inline constexpr Int start_ns{14};          // time interval of MayRunOn/RanOn paths
inline constexpr Int end_ns{15};
inline constexpr Int count{16};             // samples aggregated into a path
inline constexpr Text distance_name{17};    // hwloc distances' name ("NUMALatency")
inline constexpr Int value{18};             // a raw value (relative distance, ...)
inline constexpr Text pci_busid{19};
inline constexpr Text subtype{20};          // hwloc subtype ("MCDRAM", "CXLMem")
inline constexpr Text memattr_name{21};     // "Bandwidth", "Latency", ...
inline constexpr Text unit{22};

inline constexpr std::array<std::string_view, 23> names = {
    "cpuset",      "complete_cpuset", "nodeset",      "cache_level",   "cache_kind",
    "size_bytes",  "line_size",       "associativity", "cpukind",      "cpukind_efficiency",
    "core_type",   "hwloc_type",      "logical_index", "hostname",     "start_ns",
    "end_ns",      "count",           "distance_name", "value",        "pci_busid",
    "subtype",     "memattr_name",    "unit",
};
}  // namespace keys

}  // namespace stacksage
