// The JSON form of the memory heatmaps (analysis/memory_heatmap.hpp), for the
// report's "memory" member (docs/report-json.md): per node, per level, the
// counts per PU and per core in topology order, per serving component, and
// the first-touch and PAPI figures. Everything the terminal heatmap shows,
// unshaded.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/memory_heatmap.hpp"

namespace stacksage {

nlohmann::json memory_heatmaps_to_json(const std::vector<NodeMemoryHeatmap>& heatmaps);

}  // namespace stacksage
