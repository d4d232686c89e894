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
// Debian installs each build of a BLAS under the name every build shares
// (libblas.so.3, libblis.so.4) in a directory named after the build
// (openblas-pthread, openblas-openmp, blis-pthread, blis-openmp): those
// directories name the library.
//
// \return the runtime; never fails.
RuntimeName classify_module(std::string_view module_path, std::string_view exe);

// How the number of threads a runtime computes with is set.
struct ThreadCountSetting {
    // The variable read at start-up ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
    // "BLIS_NUM_THREADS", "MKL_NUM_THREADS"); "" when the runtime reads none.
    std::string_view variable;
    // What works instead, or as well, in the program (TBB: global_control,
    // task_arena); "" when the variable is the whole answer.
    std::string_view in_the_program;
    // What the runtime does when the variable is unset.
    std::string_view default_count;
};

// \return the setting of a runtime that sizes a thread pool (OpenMP, the
//         BLAS libraries, MKL, TBB); an empty variable and advice for others.
ThreadCountSetting thread_count_setting(const RuntimeName& runtime);

// The thread-count variables of the math libraries, which take precedence
// over OMP_NUM_THREADS in their OpenMP builds (whose threads libgomp or
// libomp creates): a process whose recorded environment sets one is told
// that variable too.
inline constexpr std::string_view kMathLibraryThreadVariables[] = {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                                   "BLIS_NUM_THREADS", "MKL_NUM_THREADS"};

std::string_view to_string(RuntimeFamily family);

}  // namespace stacksage
