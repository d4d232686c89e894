// Check: where threads really ran (cpu-clock "ran on" samples) against where
// they were allowed to run (their affinity intervals).
//  - "ran-outside-affinity" (warning): a thread was sampled on CPUs none of
//    its recorded masks allowed: its affinity was changed by a path the
//    recorder did not see (or the samples are from another thread).
//  - "thread-migrations" (info): threads allowed on several CPUs that the
//    kernel moved between them while they ran, with the count of moves seen
//    between consecutive samples; pinning keeps caches and NUMA memory warm.
// Only threads followed by the cpu-clock sampler are judged (the loader's
// migrations count marks them); runs without such samples get no findings.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/launcher.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

struct PlacementOptions {
    // A thread counts as migrating from this many moves between samples on.
    std::int64_t min_migrations = 2;
};

std::vector<Finding> check_placement(const RunView& view, const LauncherInfo& launcher,
                                     const PlacementOptions& options = {});

}  // namespace stacksage
