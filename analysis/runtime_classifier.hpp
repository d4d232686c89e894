// Which runtime created a flow, from the module (executable or shared
// library) that called pthread_create.
//
// Runtimes are named the way users know them ("GNU OpenMP", "Open MPI",
// "MKL") and grouped into families (OpenMP, MPI, ...) for the stacking
// category. Modules not in the table are named by their file name without
// version suffix ("libfoo"), family Library.
#pragma once

#include <string>
#include <string_view>

namespace stacksage {

enum class RuntimeFamily : std::uint8_t {
    Application,  // the executable's own threads (and its main thread)
    MPI,          // MPI libraries and their helpers (PMIx, UCX, libfabric)
    OpenMP,
    TBB,
    MathLibrary,  // MKL, OpenBLAS, ...: threads a library starts on its own
    Accelerator,  // CUDA, HIP/ROCm, oneAPI Level Zero helper threads
    Library,      // any other shared library
    Unknown,      // the recorder could not tell
};

struct RuntimeName {
    std::string name;  // "GNU OpenMP", "Open MPI", "application", "libfoo"
    RuntimeFamily family = RuntimeFamily::Unknown;
};

// Classifies a creating module. exe is the process's executable: threads
// created from it are the application's. An empty module gives Unknown.
//
// \return the runtime; never fails.
RuntimeName classify_module(std::string_view module_path, std::string_view exe);

std::string_view to_string(RuntimeFamily family);

}  // namespace stacksage
