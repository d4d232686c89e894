// Heatmap data of sampled memory accesses, per node and per level: how many
// samples each PU issued that were served by L1, L2, L3, DRAM (local or
// remote), ..., summed per core, per serving component (cache instance,
// NUMA node), and the share of each level. Page-fault samples (first touch)
// are kept apart: they say where pages were placed, not where accesses
// were served.
//
// Read from the MemoryAccess DataPaths of the merged model
// (core/run_model_schema.hpp, parsers/memory_access_paths.hpp); the reports draw it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/model.hpp"

namespace stacksage {

struct HeatmapLevel {
    std::string level;                // served-by name: "L1", "L2", "L3", "local_dram", ...
    std::uint64_t samples = 0;
    double share = 0;                 // of the node's access samples
    std::uint64_t loads = 0, stores = 0;
    std::uint64_t remote = 0;         // samples served from outside the issuing PU's NUMA node
    double mean_latency = -1;         // mean latency weight (cycles); -1 when none was measured
    std::vector<std::uint64_t> per_pu;    // same order as NodeMemoryHeatmap::pus
    std::vector<std::uint64_t> per_core;  // same order as NodeMemoryHeatmap::cores
    // The serving components (cache instances, NUMA nodes, the node), most samples first.
    struct Target {
        ComponentId id = kNoComponent;
        ComponentType type = ComponentType::Generic;
        std::string kind;           // "L2", "DRAM", ...
        std::int64_t os_index = -1;       // NUMA nodes: their number
        std::int64_t logical_index = -1;  // caches: hwloc's logical index
        std::uint64_t samples = 0;
    };
    std::vector<Target> per_target;
};

// What the first-touch samples say about NUMA locality, decided here so that
// every report says the same.
enum class FirstTouchLocality : std::uint8_t {
    None,            // no page-fault samples
    SingleNumaNode,  // the node has one NUMA node: every page is local, locality cannot be an issue
    Local,           // every page whose node is known sits on the touching PU's node
    PartlyRemote,    // some pages sit off the touching PU's node
    Unresolved,      // no page's node could be looked up
};
std::string_view to_string(FirstTouchLocality locality);  // "none", "single_numa_node", "local", ...

// A call site or a data object with its samples per level: the rows of the
// reports' table of call sites x levels and of their heatmap per object
// (from the MemoryAccess paths' `site`, `call_path`, `object`, `object_kind`).
struct HeatmapCodeRow {
    std::string label;   // site: "init_mesh (mesh.c:102)"; object: "heap block of 80 MiB allocated at ..."
    std::string detail;  // site: its call path; object: its kind ("heap", "static", ...)
    std::vector<std::uint64_t> per_level;  // same order as NodeMemoryHeatmap::levels
    std::uint64_t accesses = 0;            // access samples (the sum of per_level)
    std::uint64_t first_touch = 0;         // page-fault samples
    std::uint64_t first_touch_remote = 0;  // of which placed off the touching PU's NUMA node
    std::uint64_t total() const { return accesses + first_touch; }
};

// Rows kept per node in NodeMemoryHeatmap::sites and ::objects.
inline constexpr std::size_t kHeatmapTopRows = 50;
// Call sites the reports list per level (JSON; the text lists 3).
inline constexpr std::size_t kTopSitesPerLevel = 5;

struct NodeMemoryHeatmap {
    std::string host;
    ComponentId node = kNoComponent;
    std::vector<ComponentId> pus;     // in topology order
    std::vector<std::int64_t> pu_os;  // their OS numbers
    std::vector<ComponentId> cores;   // in topology order
    std::vector<std::size_t> core_of_pu;
    std::size_t numa_nodes = 0;         // NUMA nodes in the node's topology
    // Every backend that delivered samples on this node, in the order pebs,
    // ibs, pagefault, cpuclock, papi; with the samples each delivered (PAPI
    // counts misses, not samples: it has no entry there).
    std::vector<std::string> backends;
    std::vector<std::pair<std::string, std::uint64_t>> samples_by_backend;
    std::vector<std::string> access_backends;  // those behind `levels` ("pebs", "ibs")
    std::uint64_t access_samples = 0;
    std::vector<HeatmapLevel> levels;   // in hierarchy order, only levels with samples
    // First touch (page-fault samples).
    std::uint64_t first_touch_samples = 0;
    std::uint64_t first_touch_remote = 0;  // pages placed off the touching PU's NUMA node
    // Pages whose NUMA node the kernel did not report when the recorder
    // asked (move_pages, shortly after the fault): freed or unmapped by then,
    // or the lookup not allowed. They are in no first_touch_per_numa entry.
    std::uint64_t first_touch_unresolved = 0;
    std::vector<std::uint64_t> first_touch_per_pu;
    std::vector<std::pair<std::int64_t, std::uint64_t>> first_touch_per_numa;  // (NUMA node number, samples)
    FirstTouchLocality first_touch_locality = FirstTouchLocality::None;
    // PAPI misses per level ("L1", "L2", "L3"), summed over the node's PUs.
    std::vector<std::pair<std::string, std::uint64_t>> papi_misses;
    // Call sites and data objects (where the recorder attributed samples),
    // most samples first, at most kHeatmapTopRows each; the samples of the
    // rows left out, and of samples without a site.
    std::vector<HeatmapCodeRow> sites, objects;
    std::uint64_t sites_left_out = 0, objects_left_out = 0;
    std::uint64_t samples_without_site = 0;

    bool empty() const { return access_samples == 0 && first_touch_samples == 0 && papi_misses.empty(); }
};

// One heatmap per Node of the model that has memory samples, in model order;
// the nodes are read on `threads` threads (0: one per core).
std::vector<NodeMemoryHeatmap> build_memory_heatmaps(const Model& model, unsigned threads = 0);

// The call sites with the most samples served by levels[level]: at most n
// (site row, samples) pairs, most first; empty without attributed samples.
std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> top_sites_of_level(const NodeMemoryHeatmap& heatmap,
                                                                                std::size_t level, std::size_t n);
// The same for the first touches (page-fault samples).
std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> top_first_touch_sites(const NodeMemoryHeatmap& heatmap,
                                                                                   std::size_t n);

// Hierarchy order of the served-by levels (L1 first, unknown last); -1 for
// names it does not know.
int memory_level_rank(std::string_view level);

}  // namespace stacksage
