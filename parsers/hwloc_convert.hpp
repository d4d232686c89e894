// Converting a loaded hwloc topology into Model components and DataPaths.
//
// The lower level behind hwloc_loader.hpp, for code that already holds an
// hwloc_topology_t (the preload's own discovery, the analyzer merging nodes).
//
// Object mapping (kind in quotes; hwloc's own type name is always kept in
// keys::hwloc_type, its logical index in keys::logical_index, its subtype in
// keys::subtype, its name as the component name, its os_index as os_index):
//   Machine               -> Node (keys::hostname, kJobRestrictedKey)
//   Package               -> Chip "package"
//   Die                   -> Subdivision "die"
//   Group                 -> Subdivision "group"   (subtype e.g. "SNC", "Cluster")
//   NUMANode              -> Numa, kind = hwloc subtype ("DRAM", "MCDRAM", "HBM" or "");
//                            keys::size_bytes = local memory
//   MemCache              -> Memory "memory-side-cache" (cache attributes)
//   L1..L5, L1i..L3i      -> Cache "L1d", "L1i", "L2", ... (hwloc's naming: "d" data,
//                            "i" instruction, nothing for unified); keys::cache_level,
//                            cache_kind ("data"/"instruction"/"unified"), size_bytes,
//                            line_size, associativity
//   Core                  -> Core
//   PU                    -> Thread, os_index = the OS CPU number
//   Bridge                -> Generic "host-bridge" (host side) or "pci-bridge" (keys::pci_busid)
//   PCIDev                -> Generic "pci-device" (keys::pci_busid, pci_vendor_id,
//                            pci_device_id, pci_class_id as integers)
//   OSDev GPU / CoProc    -> Chip "gpu" / "coproc"
//   OSDev Network / OpenFabrics -> Chip "nic" / "openfabrics"
//   OSDev Block           -> Storage "block"
//   OSDev DMA             -> Generic "dma"
//   Misc                  -> Generic "misc"
// Every object with a cpuset gets keys::cpuset and keys::complete_cpuset (and
// keys::nodeset when it has one), clipped to the machine's complete sets if
// hwloc ever hands an infinite bitmap. Every hwloc info (CPUModel, NodeGUID,
// Port1GID0, ...) becomes a string attribute under its own name.
//
// Children are added in this order, each group in hwloc's order: memory
// children, normal children, I/O children, Misc children. So a NUMA node is
// never a parent of caches or cores: it is a leaf, and a memory-side cache's
// only children are the NUMA nodes behind it.
//
// CPU kinds: every Core and Thread of a kind gets keys::cpukind (index),
// keys::cpukind_efficiency (hwloc's rank; -1 unknown), keys::core_type (the
// CoreType info) and the kind's other infos (FrequencyMaxMHz, ...).
//
// Distances: each entry between two distinct converted objects becomes an
// oriented DataPath, GpuLink for NVLink/XGMI/XeLink matrices, NumaDistance
// otherwise, with keys::distance_name and keys::value, and latency or
// bandwidth set from the matrix kind. Zero entries of bandwidth matrices mean
// "no link" and give no DataPath.
//
// Memory attributes that need an initiator (Bandwidth, Latency, ...): one
// MemoryAttribute DataPath per (initiator, NUMA node) value, from the component
// with the smallest cpuset covering the initiator cpuset (the highest of equal
// ones: a Package rather than its only L3), or from the initiator object, with
// keys::memattr_name, keys::value, keys::unit and bandwidth or latency set.
// Other memory attributes with values (not Capacity and Locality, already
// given by size_bytes and cpuset) become integer attributes of the NUMA node.
#pragma once

#include <hwloc.h>

#include "core/model.hpp"
#include "core/result.hpp"
#include "parsers/hwloc_loader.hpp"

namespace stacksage {

// Adds the loaded hwloc topology under parent (kNoComponent: as a new root).
// The topology is only read: its filters decide which objects exist, and
// options.include_io decides whether its I/O objects are converted.
// options.hostname, when not empty, overrides the HostName info.
//
// \return the id of the Node (hwloc's Machine).
// \return an Error when parent is not a live component of model, or when the
//         topology has no root object or a root that is not a Machine (an
//         XML file can make hwloc root a topology at a Package). The model
//         is unchanged then.
Result<ComponentId> add_hwloc_topology(Model& model, hwloc_topology_t topology,
                                       ComponentId parent, const HwlocLoadOptions& options);

}  // namespace stacksage
