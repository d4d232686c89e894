// Sampling summaries into the model: each aggregated memory access becomes
// part of a MemoryAccess DataPath from the PU that issued it to the
// component that served it, as in sys-sage's MemAxes use case:
//
//   served by L1 / fill buffer   -> the PU's L1 data cache
//   L2, L3, L4                   -> the PU's cache of that level
//   peer_cache (another core's   -> the PU's last-level cache
//     cache, same node)
//   local/remote DRAM, PMEM, CXL,-> the NUMA node holding the address
//     remote cache, page faults     (move_pages at run time); when unknown,
//     (first touch), unknown        local DRAM goes to the PU's own NUMA node
//                                   and the rest to the Node
//   I/O, uncached                -> the Node
//
// One path per (thread, PU, target, level, backend, call site, data object),
// with these attributes (memory_access_keys in core/run_model_schema.hpp;
// the levels' words in core/memory_level.hpp): count, loads, stores, weight
// sums and the latency histogram, the NUMA node, whether it was remote to
// the PU, the thread and process; where the recorder attributed the samples,
// `site`, `call_path`, `object` and `object_kind`, resolved after the run
// (parsers/code_location/attribution_resolver.hpp).
//
// Sites and objects split paths, so the model stays bounded at scale by
// keeping the kMaxAttributedPairs (site, object) pairs with the most samples
// per process apart; the rest are summed into the path without a site or
// object, and a note says how many samples that was. Sites of one label
// (several instructions of one source line) are one site. cpu-clock samples become RanOn paths Flow -> PU with
// counts; PAPI counts become MemoryAccess paths PU -> cache with "misses".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/sample_summary.hpp"

namespace stacksage {

inline constexpr std::size_t kMaxAttributedPairs = 64;

struct MemoryPathStats {
    std::size_t access_paths = 0;   // MemoryAccess paths added (samples)
    std::size_t ran_on_paths = 0;
    std::size_t papi_paths = 0;
    std::uint64_t samples_placed = 0;
    std::uint64_t samples_unplaced = 0;  // on CPUs the topology does not have
    std::size_t sites = 0;               // distinct call sites (by label) the summary attributed samples to
    std::vector<std::string> notes;      // complete sentences about what was left out
};

struct CodeFilesCache;

// Adds the summary's samples to model under host_node (a Node component
// holding the host's hwloc subtree). flow_of maps a thread id of the
// summary's process to its Flow component (kNoComponent: RanOn paths for
// that thread are skipped, MemoryAccess paths still carry the tid).
// code_files: module files and symbols shared with the run's other
// summaries (parsers/code_location/attribution_resolver.hpp); nullptr: this
// summary's own.
MemoryPathStats add_sample_summary(Model& model, ComponentId host_node, const SampleSummary& summary,
                                   const std::function<ComponentId(std::int64_t tid)>& flow_of,
                                   CodeFilesCache* code_files = nullptr);

// The component a sample served by `level` is attributed to, as above.
// pu: the issuing PU (a Thread component); numa_node: the address's node, -1 unknown.
ComponentId memory_access_target(const Model& model, ComponentId host_node, ComponentId pu,
                                 std::string_view level, std::int64_t numa_node);

}  // namespace stacksage
