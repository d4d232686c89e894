// Check 6, the runtime-stacking summary of each process: which runtimes it
// holds, how many flows each created, and the runtime-stacking paper's
// category of the combination.
//
// Runtimes present: every runtime that created a flow (the main thread is the
// application's), and MPI when the process called MPI_Init even if MPI
// created no thread. Categories, from the programming models (runtime
// families: Open MPI and its PMIx helpers are one model) present:
//  - "no runtime stacking": one runtime (or the application alone);
//  - "explicit intra-application": the application itself combines
//    programming models (MPI, OpenMP, TBB, its own threads);
//  - "explicit inter-application through a library": a library the
//    application calls (MKL, OpenBLAS, a GPU runtime, any other library)
//    runs threads of its own next to the application's runtimes.
#pragma once

#include <string>
#include <vector>

#include "analysis/run_view.hpp"

namespace stacksage {

struct RuntimeUse {
    std::string name;           // "GNU OpenMP"
    RuntimeFamily family = RuntimeFamily::Unknown;
    std::size_t flows = 0;      // flows it created (the main thread counts for the application)
    std::size_t active = 0;     // of which not service flows
};

struct RuntimeStacking {
    std::uint32_t process = 0;  // index into RunView::processes
    std::vector<RuntimeUse> runtimes;  // the application first, then by flows created
    std::string category;
};

std::string_view kNoStacking();

// The summary of one process (launchers included: they are shown, not checked).
RuntimeStacking summarize_runtime_stacking(const RunView& view, std::uint32_t process);

}  // namespace stacksage
