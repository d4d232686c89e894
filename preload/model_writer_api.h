/* The one entry point of libstacksage-model.so, the library the preload
 * opens at exit to write the process's model. A C interface: the preload is
 * built without libstdc++, and the two must agree without sharing types. */
#ifndef STACKSAGE_PRELOAD_MODEL_WRITER_API_H
#define STACKSAGE_PRELOAD_MODEL_WRITER_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define kStacksageModelWriterLibrary "libstacksage-model.so"
/* The entry point's name carries the interface's version, raised with every
 * change of its arguments or of what it reads: a writer library of another
 * stacksage found next to the preload (a copy left in a shared folder) then
 * has no such symbol and is refused with dlsym's error in the model event,
 * instead of being called with arguments it does not take. */
#define kStacksageModelWriterSymbol "stacksage_write_process_model_v3"

/* Reads stream `stream` of <host_dir>/<log_name> (the node's event file;
 * from its `regions` regions at `region_offsets`, in stream order, not the
 * whole file;
 * and <host_dir>/topology.xml when present), builds the process's model and
 * writes it as a stream of <host_dir>/node.models linked to that stream.
 * Returns 0 on success, with a note in error when something was worked
 * around (the node's topology snapshot could not be used or published; ""
 * when nothing was); otherwise 1, with the reason in error. Never blocks on
 * a file in host_dir: a FIFO there is refused, a held lock waited for a
 * bounded time (parsers/node_topology_cache.hpp). */
typedef int (*StacksageWriteProcessModel)(const char* host_dir, const char* log_name, uint64_t stream,
                                          const uint64_t* region_offsets, size_t regions, int64_t pid,
                                          int64_t rank, char* error, size_t error_cap);

int stacksage_write_process_model_v3(const char* host_dir, const char* log_name, uint64_t stream,
                                  const uint64_t* region_offsets, size_t regions, int64_t pid, int64_t rank,
                                  char* error, size_t error_cap);

#ifdef __cplusplus
}
#endif

#endif
