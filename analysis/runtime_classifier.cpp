#include "analysis/runtime_classifier.hpp"

#include <array>

namespace stacksage {

namespace {

struct Known {
    std::string_view prefix;  // of the file name
    std::string_view name;
    RuntimeFamily family;
};

// First match wins: more specific prefixes first.
constexpr std::array<Known, 27> kKnown = {{
    {"libgomp", "GNU OpenMP", RuntimeFamily::OpenMP},
    {"libiomp", "Intel OpenMP", RuntimeFamily::OpenMP},
    {"libomptarget", "LLVM OpenMP offload", RuntimeFamily::OpenMP},
    {"libomp", "LLVM OpenMP", RuntimeFamily::OpenMP},
    {"libmpi.so.12", "MPICH", RuntimeFamily::MPI},
    {"libmpich", "MPICH", RuntimeFamily::MPI},
    {"libmpi_", "Open MPI", RuntimeFamily::MPI},
    {"libmpi.so", "Open MPI", RuntimeFamily::MPI},
    {"libopen-pal", "Open MPI", RuntimeFamily::MPI},
    {"libopen-rte", "Open MPI", RuntimeFamily::MPI},
    {"libprrte", "Open MPI", RuntimeFamily::MPI},
    {"libpmix", "PMIx", RuntimeFamily::MPI},
    {"libpmi", "PMI", RuntimeFamily::MPI},
    {"libucp", "UCX", RuntimeFamily::MPI},
    {"libucs", "UCX", RuntimeFamily::MPI},
    {"libuct", "UCX", RuntimeFamily::MPI},
    {"libfabric", "libfabric", RuntimeFamily::MPI},
    {"libpsm", "PSM", RuntimeFamily::MPI},
    {"libtbb", "TBB", RuntimeFamily::TBB},
    {"libmkl", "MKL", RuntimeFamily::MathLibrary},
    {"libopenblas", "OpenBLAS", RuntimeFamily::MathLibrary},
    {"libblis", "BLIS", RuntimeFamily::MathLibrary},
    {"libcudart", "CUDA", RuntimeFamily::Accelerator},
    {"libcuda", "CUDA", RuntimeFamily::Accelerator},
    {"libamdhip", "HIP", RuntimeFamily::Accelerator},
    {"libhsa-runtime", "HIP", RuntimeFamily::Accelerator},
    {"libze_", "Level Zero", RuntimeFamily::Accelerator},
}};

std::string_view file_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The directory the module is in: "openblas-pthread" for
// /usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3.
std::string_view directory_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return {};
    const std::string_view dir = path.substr(0, slash);
    const std::size_t before = dir.rfind('/');
    return before == std::string_view::npos ? dir : dir.substr(before + 1);
}

// Debian's alternatives: every build of a BLAS is libblas.so.3 (and
// libblis.so.4, libopenblas.so.0) in a directory named after the build.
constexpr std::array<Known, 3> kBuildDirectories = {{
    {"openblas", "OpenBLAS", RuntimeFamily::MathLibrary},
    {"blis", "BLIS", RuntimeFamily::MathLibrary},
    {"mkl", "MKL", RuntimeFamily::MathLibrary},
}};

}  // namespace

RuntimeName classify_module(std::string_view module_path, std::string_view exe) {
    if (module_path.empty()) return {"unknown", RuntimeFamily::Unknown};
    if (!exe.empty() && (module_path == exe || file_name(module_path) == file_name(exe)))
        return {"application", RuntimeFamily::Application};
    const std::string_view file = file_name(module_path);
    for (const Known& k : kKnown)
        if (file.starts_with(k.prefix)) return {std::string(k.name), k.family};
    if (file.starts_with("libblas") || file.starts_with("liblapack") || file.starts_with("libcblas")) {
        const std::string_view dir = directory_name(module_path);
        for (const Known& k : kBuildDirectories)
            if (dir.starts_with(k.prefix)) return {std::string(k.name), k.family};
    }
    // Not a shared object: another executable image (a program that was
    // exec'ed over, a JIT): call it the application's.
    if (file.find(".so") == std::string_view::npos) return {"application", RuntimeFamily::Application};
    return {std::string(file.substr(0, file.find(".so"))), RuntimeFamily::Library};
}

ThreadCountSetting thread_count_setting(const RuntimeName& runtime) {
    switch (runtime.family) {
        case RuntimeFamily::OpenMP: return {"OMP_NUM_THREADS", "", "one thread per CPU the process may use"};
        case RuntimeFamily::MathLibrary:
            if (runtime.name == "OpenBLAS")
                return {"OPENBLAS_NUM_THREADS", "", "one thread per CPU the process may use"};
            if (runtime.name == "BLIS") return {"BLIS_NUM_THREADS", "", "OMP_NUM_THREADS, else 1 thread"};
            if (runtime.name == "MKL") return {"MKL_NUM_THREADS", "", "one thread per core the process may use"};
            return {};
        case RuntimeFamily::TBB:
            return {"",
                    "TBB reads no variable for its thread count: limit it in the program with "
                    "tbb::global_control(tbb::global_control::max_allowed_parallelism, N), or run the work in a "
                    "tbb::task_arena(N)",
                    "one thread per CPU the process may use"};
        default: return {};
    }
}

std::string_view to_string(RuntimeFamily family) {
    switch (family) {
        case RuntimeFamily::Application: return "application";
        case RuntimeFamily::MPI: return "MPI";
        case RuntimeFamily::OpenMP: return "OpenMP";
        case RuntimeFamily::TBB: return "TBB";
        case RuntimeFamily::MathLibrary: return "math library";
        case RuntimeFamily::Accelerator: return "accelerator";
        case RuntimeFamily::Library: return "library";
        case RuntimeFamily::Unknown: return "unknown";
    }
    return "unknown";
}

}  // namespace stacksage
