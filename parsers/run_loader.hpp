// Loading a whole recorded run (the directory `stacksage run` wrote) into one
// merged Model: see core/run_model_schema.hpp for its shape.
//
//   OUT/run.json                   what was run (optional: its absence is noted)
//   OUT/<host>/topology.xml        the node's hwloc topology (optional: without it
//                                  the node is rebuilt from the cpusets seen)
//   OUT/<host>/node.events         the node's event logs, one stream per process image
//   OUT/<host>/*.jsonl             earlier layout: one event log per process image
//
// Real runs leave broken things behind; each is noted and the rest is loaded:
// torn last lines, unknown events, corrupt logs (skipped, named), a missing or
// unreadable topology (fallback), masks naming CPUs the topology lacks. So do
// hostile ones: every file is read through input_file.hpp (a FIFO, a device,
// a directory or a file over its size limit is refused by name, never waited
// on), a second log of one pid covering the same time is skipped, and ids and
// masks no recorder writes are skipped or bounded (process_log.hpp), each
// with a note. Error notes mean part of the run is missing from the analysis
// (`stacksage check` fails on them).
#pragma once

#include <string>
#include <vector>

#include "core/load_note.hpp"
#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

struct RunLoadOptions {
    // Threads that read and parse event logs; 0: one per available core.
    unsigned parse_threads = 0;
};

struct RunLoadStats {
    std::size_t hosts = 0;
    std::size_t logs = 0;          // event logs: node files' streams, and files of the earlier layout
    std::size_t streams = 0;       // streams read from node event files (one per process image)
    std::size_t logs_skipped = 0;  // corrupt, unreadable, or a duplicate of another log of the pid
    std::size_t events = 0;
    std::size_t processes = 0;
    std::size_t flows = 0;
    std::size_t topologies_loaded = 0;  // distinct topology files given to hwloc
    std::size_t snapshots_mapped = 0;   // host topologies mapped from topology.snap instead
    double parse_seconds = 0;      // reading and interpreting event logs
    double topology_seconds = 0;   // loading and grafting topologies
    double build_seconds = 0;      // processes, flows and DataPaths
};

struct LoadedRun {
    Model model;
    ComponentId topology = kNoComponent;  // the Topology root; Nodes are its children
    std::string directory;
    std::vector<LoadNote> notes;
    RunLoadStats stats;
};

// Loads the run recorded in out_dir.
//
// \return the merged model with its notes (possibly empty of processes when
//         every log was corrupt: the notes then say why).
// \return an Error when out_dir is not a readable directory or holds no host
//         directory with event logs (not a stacksage run; when host
//         directories could not be read, the Error gives their error).
Result<LoadedRun> load_run(const std::string& out_dir, const RunLoadOptions& options = {});

}  // namespace stacksage
