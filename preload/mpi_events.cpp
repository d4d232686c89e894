// MPI_Init, MPI_Init_thread and MPI_Finalize, through the PMPI profiling
// interface: the rank and size as MPI sees them, and a snapshot of every
// thread's mask right after initialisation (MPI's progress threads exist by
// then) and right before finalisation.
//
// The preload never links libmpi: these definitions are only ever called by
// a program that does, and the PMPI_* they forward to are looked up at that
// moment. No mpi.h either, so one build serves Open MPI and the MPICH family:
// the two ABIs differ only in what MPI_COMM_WORLD is.
#include <dlfcn.h>

#include <cstdint>

#include "preload/live_watcher.hpp"
#include "preload/text.hpp"
#include "preload/thread_snapshot.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// MPI_ERR_OTHER is 16 in Open MPI and 15 in MPICH; any nonzero value is an
// error to the caller, and this one only happens when no MPI library is
// loaded at all.
constexpr int kNoMpiLibrary = 16;

void* find_pmpi(const char* name) {
    if (void* p = dlsym(RTLD_NEXT, name)) return p;
    // libmpi loaded with RTLD_LOCAL (some language bindings do that).
    static const char* const kLibraries[] = {"libmpi.so.40", "libmpi.so.12", "libmpi.so"};
    for (const char* lib : kLibraries) {
        if (void* handle = dlopen(lib, RTLD_NOW | RTLD_NOLOAD)) {
            void* p = dlsym(handle, name);
            dlclose(handle);
            if (p) return p;
        }
    }
    return nullptr;
}

// MPI_COMM_WORLD: a pointer to ompi_mpi_comm_world in Open MPI, the
// constant 0x44000000 in MPICH, Intel MPI and MVAPICH. Both are passed in a
// register, so one function-pointer type calls either.
std::uintptr_t comm_world() {
    if (void* ompi = dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world"))
        return reinterpret_cast<std::uintptr_t>(ompi);
    return 0x44000000u;
}

using CommQuery = int (*)(std::uintptr_t, int*);
using QueryThread = int (*)(int*);

void record(const char* event, const char* api, int rc, bool after_init) {
    if (!tracing_ready()) return;
    RecorderScope scope;
    int rank = -1, size = -1, level = -1;
    if (after_init && rc == 0) {
        std::uintptr_t world = comm_world();
        if (auto f = reinterpret_cast<CommQuery>(find_pmpi("PMPI_Comm_rank"))) f(world, &rank);
        if (auto f = reinterpret_cast<CommQuery>(find_pmpi("PMPI_Comm_size"))) f(world, &size);
        if (auto f = reinterpret_cast<QueryThread>(find_pmpi("PMPI_Query_thread"))) f(&level);
    }
    namespace snapshot = event_schema::mpi_snapshot;
    big_line_lock().lock();
    JsonLine line(big_line_buffer(), kBigLineBytes);
    begin_event(line, event);
    line.field(snapshot::api, api);
    line.field(snapshot::rc, static_cast<std::int64_t>(rc));
    if (rank >= 0) line.field(snapshot::rank, static_cast<std::int64_t>(rank));
    if (size >= 0) line.field(snapshot::size, static_cast<std::int64_t>(size));
    if (level >= 0) line.field(snapshot::thread_level, static_cast<std::int64_t>(level));
    add_thread_snapshot(line);
    emit(line, event);
    big_line_lock().unlock();
}

}  // namespace

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int MPI_Init(int* argc, char*** argv) {
    auto pmpi = reinterpret_cast<int (*)(int*, char***)>(find_pmpi("PMPI_Init"));
    if (pmpi == nullptr) return kNoMpiLibrary;
    int rc = pmpi(argc, argv);
    record(stacksage::event_schema::mpi_init::event, "MPI_Init", rc, true);
    if (rc == 0) live_check_at_mpi_init();
    return rc;
}

STACKSAGE_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    auto pmpi =
        reinterpret_cast<int (*)(int*, char***, int, int*)>(find_pmpi("PMPI_Init_thread"));
    if (pmpi == nullptr) return kNoMpiLibrary;
    int rc = pmpi(argc, argv, required, provided);
    record(stacksage::event_schema::mpi_init::event, "MPI_Init_thread", rc, true);
    if (rc == 0) live_check_at_mpi_init();
    return rc;
}

STACKSAGE_EXPORT int MPI_Finalize() {
    auto pmpi = reinterpret_cast<int (*)()>(find_pmpi("PMPI_Finalize"));
    if (pmpi == nullptr) return kNoMpiLibrary;
    record(stacksage::event_schema::mpi_finalize::event, "MPI_Finalize", 0, true);
    return pmpi();
}
