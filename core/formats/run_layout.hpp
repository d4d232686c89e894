// The names in a run directory, shared by the recorder (which writes the
// files) and parsers/run_directory (which scans and reads them):
//
//   OUT/run.json                          what was run (written by `stacksage run`)
//   OUT/<host>/node.events                the event logs of every process image of the
//                                         node, one stream each (node_file_format.hpp)
//   OUT/<host>/node.samples               their sampling summaries, one stream each
//   OUT/<host>/node.models                their process models, one stream each
//   OUT/<host>/topology.xml               the node's hwloc topology
//   OUT/<host>/topology.snap              the node's topology snapshot
//   OUT/<host>/<log stem>.samples.bin     raw samples, when asked for (one per process)
//
// A node file whose name is taken by something else (a planted link or FIFO)
// is written under the next name: node.1.events, node.2.events, ...
//
// The earlier layout, still read (parsers/run_directory.hpp):
//   OUT/<host>/[rank-R.]pid-N[.M].jsonl   one event log per process image
//   OUT/<host>/<log stem>.samples.jsonl   the sampling summary next to its log
//   OUT/<host>/<log stem>.model.json      the process's own model
//
// Plain character arrays: the recorder uses no libstdc++ runtime.
#pragma once

namespace stacksage::formats::run_layout {

inline constexpr char kRunJson[] = "run.json";
inline constexpr char kTopologyXml[] = "topology.xml";
inline constexpr char kTopologySnapshot[] = "topology.snap";
// The node files: kNodeFilePrefix, ".N" for the N-th fallback name, a suffix.
inline constexpr char kNodeFilePrefix[] = "node";
inline constexpr char kNodeEventsSuffix[] = ".events";
inline constexpr char kNodeSamplesSuffix[] = ".samples";
inline constexpr char kNodeModelsSuffix[] = ".models";
// Earlier layout: an event log's name: the rank (4 digits at least) when the process has
// one, the pid, the image number after exec when the name is taken, then
// the suffix.
inline constexpr char kRankPrefix[] = "rank-";
inline constexpr char kPidPrefix[] = "pid-";
inline constexpr char kEventLogSuffix[] = ".jsonl";
// Files named after their log's stem (the log's name without kEventLogSuffix).
inline constexpr char kSamplesSuffix[] = ".samples.jsonl";
inline constexpr char kModelSuffix[] = ".model.json";

// The length of a name above, without its NUL.
template <unsigned long N>
constexpr unsigned long length_of(const char (&)[N]) {
    return N - 1;
}

}  // namespace stacksage::formats::run_layout
