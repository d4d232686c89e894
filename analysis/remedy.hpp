// Remedy: the change a suggestion asks for, as data.
//
// The suggestion's sentence is written from it, and scripts apply it
// without parsing prose: run processes_per_node processes per node, each on
// cores_per_process cores with threads_per_process threads computing at
// once, with these launcher options and this environment. The live tests
// follow every remedy and re-run the job to show the warning is gone.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace stacksage {

struct Remedy {
    std::int64_t processes_per_node = -1;   // -1: unchanged
    std::int64_t threads_per_process = -1;  // threads computing at once in each; -1: unchanged
    std::int64_t cores_per_process = -1;    // -1: unchanged
    std::string launcher;                   // "mpirun", "mpiexec", "srun"; "" without one
    std::vector<std::string> launcher_options;  // {"--map-by", "ppr:1:node:PE=2", "--bind-to", "core"}
    std::vector<std::pair<std::string, std::string>> env;  // {"OMP_NUM_THREADS", "2"}, ...

    bool empty() const {
        return processes_per_node < 0 && threads_per_process < 0 && cores_per_process < 0 &&
               launcher_options.empty() && env.empty();
    }
};

}  // namespace stacksage
