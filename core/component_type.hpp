// The kinds of components in a model, after sys-sage's Component Tree.
//
// Hardware types form the topology tree. Software flows (Process, Flow) are
// components too, kept in their own subtrees, and reach the hardware through
// DataPaths ("may run on", "ran on").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stacksage {

enum class ComponentType : std::uint8_t {
    Topology,     // root of a whole model (one machine or a whole run)
    Node,         // one compute node (hwloc Machine)
    Chip,         // package, GPU, NIC, co-processor: kind() says which
    Subdivision,  // die, group (SNC, CCX, ...): kind() says which
    Numa,         // NUMA node (kind(): DRAM, HBM, MCDRAM, CXL-DRAM, ...)
    Memory,       // memory that is not a NUMA node: memory-side cache, ...
    Storage,      // block devices, NVDIMM/DAX, ...
    Cache,        // CPU cache; level, kind, size, line size, associativity as attributes
    Core,
    Thread,       // a hardware thread (hwloc PU), os_index is the OS CPU number
    Process,      // software flow: an operating-system process
    Flow,         // software flow: a thread of execution
    Generic,      // anything else (PCI bridges and devices, Misc objects); kind() says what
};

inline constexpr int kComponentTypeCount = 13;

std::string_view to_string(ComponentType type);
// Accepts the names printed by to_string ("Thread", "Numa", ...), case-sensitive.
std::optional<ComponentType> component_type_from_string(std::string_view name);

inline bool is_software(ComponentType t) {
    return t == ComponentType::Process || t == ComponentType::Flow;
}

}  // namespace stacksage
