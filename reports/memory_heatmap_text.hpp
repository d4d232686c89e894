// The terminal view of sampled memory accesses (analysis/memory_heatmap.hpp):
// per node, one compact heatmap row per level, PUs in topology order, each
// shaded by how many of that level's samples it issued, with the level's
// share of all samples; then first-touch placement per NUMA node.
//
//   Memory accesses on n01 (pebs, 3,000 samples), PUs 0-31 in topology order:
//     L1           40.0 %  |█▇▅ ·· ░░ ...|
//     L3           10.0 %  |▂   ·· ...|
//     local_dram   20.0 %  |...|  mean 210 cycles
//     remote_dram  30.0 %  |...|  mean 350 cycles, 100 % remote
//   First touch (pagefault, 4,096 pages): node 0 98.0 %, node 1 2.0 %
#pragma once

#include <string>
#include <vector>

#include "analysis/memory_heatmap.hpp"

namespace stacksage {

struct HeatmapTextOptions {
    bool color = false;            // ANSI colours
    std::size_t max_columns = 128; // PUs drawn per row; more are folded into cores, then into groups
};

std::string render_memory_heatmaps(const std::vector<NodeMemoryHeatmap>& heatmaps,
                                   const HeatmapTextOptions& options = {});

}  // namespace stacksage
