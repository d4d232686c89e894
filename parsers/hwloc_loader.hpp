// Loading a machine's topology into a Model, through libhwloc.
//
// Two sources: an XML file written by lstopo / hwloc (any machine, any time),
// or live discovery of the machine this process runs on. Both give the same
// shape of model:
//
//   Topology
//   └─ Node                       (hwloc Machine; keys::hostname, job_restricted)
//      ├─ memory children first   (Numa, Memory "memory-side-cache" -> Numa)
//      ├─ normal children         (Chip "package", Subdivision, Cache, Core, Thread)
//      ├─ I/O children            (only with include_io: Generic "pci-*", Chip "gpu", ...)
//      └─ Misc children           (Generic "misc")
//
// plus DataPaths for hwloc's distance matrices (NumaDistance, GpuLink) and
// memory attributes (MemoryAttribute). hwloc_convert.hpp documents the mapping.
//
// This header does not include <hwloc.h>: code that only loads topologies
// need not see libhwloc.
#pragma once

#include <string>
#include <string_view>

#include "core/model.hpp"
#include "core/result.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/hwloc_xml_check.hpp"

namespace stacksage {

struct HwlocLoadOptions {
    // Also convert I/O objects: PCI bridges and devices, and OS devices
    // (GPUs, NICs, OpenFabrics HCAs with their InfiniBand GUIDs, block devices).
    bool include_io = false;
    // Host name given to the Node; empty: the topology's own "HostName" info.
    std::string hostname{};  // "{}": GCC then accepts {.include_io = true} without -Wextra noise
};

// Name of the Node's integer attribute that tells whether the topology is
// restricted to a job: run_keys::job_restricted (core/run_model_schema.hpp).
inline constexpr const char* kJobRestrictedKey = run_keys::job_restricted.data();

// Loads an hwloc XML topology file (formats 1.x and 2.x, as hwloc 2 reads them).
//
// Everything in the file is kept (instruction caches, groups, Misc objects);
// I/O objects only with options.include_io.
//
// \return a Model whose only root is a Topology component holding one Node.
// \return an Error, naming the file, the reason and what to do, when the path
//         is missing, not a regular file, larger than input_limits::kTopologyXml
//         (256 MiB), unreadable, empty, not XML, not an
//         hwloc topology, truncated, of an unsupported format version (> 2.x),
//         or rejected by hwloc. Never a partial model.
Result<Model> load_hwloc_xml(const std::string& path, const HwlocLoadOptions& options = {});

// Reads the XML file at path as load_hwloc_xml does (input_file.hpp: a
// regular file only, never waited on, at most input_limits::kTopologyXml
// bytes), for callers that look at the text before loading it.
//
// \return the text (never empty).
// \return the Error load_hwloc_xml would give for the file.
Result<std::string> read_hwloc_xml_file(const std::string& path);

// The same for XML text already in memory (a file's contents, a fuzzer's
// input). `name` stands for the file in error messages.
Result<Model> load_hwloc_xml_text(const std::string& text, const std::string& name,
                                  const HwlocLoadOptions& options = {});

// check_hwloc_xml_text (what runs before hwloc sees the text): hwloc_xml_check.hpp.

// Discovers the machine this process runs on (hwloc's native backends).
//
// Only the PUs and NUMA nodes this process is allowed to use (its cgroup)
// appear as components; the Node's keys::complete_cpuset still lists them all.
// With include_io, the PCI objects hwloc deems important are kept (lstopo's default).
//
// \return a Model shaped as for load_hwloc_xml.
// \return an Error when hwloc cannot discover the machine.
Result<Model> discover_this_machine(const HwlocLoadOptions& options = {});

}  // namespace stacksage
