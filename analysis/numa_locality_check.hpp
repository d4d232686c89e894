// Check: NUMA locality, from memory samples (core/run_model_schema.hpp, parsers/memory_access_paths.hpp).
//  - "numa-remote-access" (warning): threads whose sampled DRAM accesses
//    (PEBS, IBS) are mostly served by a NUMA node other than their PU's.
//  - "numa-serial-first-touch" (warning): a process whose threads run on
//    several NUMA nodes while one thread first-touched most of its sampled
//    pages (page-fault samples), which put them all on that thread's node.
// Each finding carries the concrete fix: first-touch initialisation in
// parallel, OMP_PROC_BIND/OMP_PLACES, numactl --localalloc/--membind, and
// binding ranks to NUMA domains with the launcher the run used.
// Nodes with a single NUMA node, and runs without samples, get no findings.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/launcher.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

struct NumaLocalityOptions {
    double remote_share = 0.5;         // a thread is "remote" above this share of its DRAM samples
    std::uint64_t min_dram_samples = 50;  // fewer samples say nothing
    double serial_touch_share = 0.8;   // one thread first-touched at least this share of the pages
    std::uint64_t min_pages = 64;      // page-fault samples a process needs to be judged
};

std::vector<Finding> check_numa_locality(const RunView& view, const LauncherInfo& launcher,
                                         const NumaLocalityOptions& options = {});

}  // namespace stacksage
