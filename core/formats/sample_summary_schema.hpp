// The sampling summary's schema (`pid-N.samples.jsonl`, docs/sampling.md):
// every record's name and the names of its fields, shared by the sampler
// that writes the summary at exit (preload/sampling/summary_writer.cpp) and
// the parser that reads it (parsers/sample_summary.cpp). A name spelled in
// one place cannot drift between the writer and the reader.
//
// Header-only and constexpr, as the event log's schema (event_schema.hpp):
// the sampler is built without libstdc++'s runtime. Each record has a
// namespace holding `rec`, its name, and its fields; `fields` lists them
// all, for tests that hold a summary against the schema. The fields every
// record has are in `common`.
#pragma once

#include <string_view>

namespace stacksage::sample_summary_schema {

// The "v" of every line. A change that breaks readers increments it; new
// records and fields do not (readers skip what they do not know).
inline constexpr int kVersion = 1;

namespace common {
inline constexpr char v[] = "v";
inline constexpr char rec[] = "rec";
inline constexpr std::string_view fields[] = {v, rec};
}  // namespace common

// The first line: what was asked for and what ran.
namespace sampling {
inline constexpr char rec[] = "sampling";
inline constexpr char pid[] = "pid";
inline constexpr char host[] = "host";
inline constexpr char start_ns[] = "start_ns";
inline constexpr char end_ns[] = "end_ns";
inline constexpr char requested[] = "requested";  // "auto", or a list of backend names
inline constexpr char used[] = "used";            // a list of backend names
inline constexpr char ring_pages[] = "ring_pages";
inline constexpr char max_rings[] = "max_rings";
inline constexpr char periods[] = "periods";  // an object: period
inline constexpr char ldlat[] = "ldlat";
inline constexpr char raw_file[] = "raw_file";  // the raw sample file's name, or null
inline constexpr char unsampled_threads[] = "unsampled_threads";
inline constexpr std::string_view fields[] = {pid,     host,  start_ns, end_ns,   requested,        used,
                                              ring_pages, max_rings, periods, ldlat, raw_file, unsampled_threads};
namespace period {
inline constexpr char pebs[] = "pebs";
inline constexpr char ibs[] = "ibs";
inline constexpr char pagefault[] = "pagefault";
inline constexpr char cpuclock_ns[] = "cpuclock_ns";
inline constexpr std::string_view fields[] = {pebs, ibs, pagefault, cpuclock_ns};
}  // namespace period
}  // namespace sampling

// One per backend the sampler knows, used or not.
namespace backend {
inline constexpr char rec[] = "backend";
inline constexpr char name[] = "name";
inline constexpr char requested[] = "requested";
inline constexpr char available[] = "available";
inline constexpr char reason[] = "reason";
inline constexpr char threads_opened[] = "threads_opened";
inline constexpr char threads_failed[] = "threads_failed";
inline constexpr char error[] = "error";
inline constexpr std::string_view fields[] = {name, requested, available, reason, threads_opened, threads_failed,
                                              error};
}  // namespace backend

// One per sampled thread.
namespace thread {
inline constexpr char rec[] = "thread";
inline constexpr char tid[] = "tid";
inline constexpr char start_ns[] = "start_ns";
inline constexpr char end_ns[] = "end_ns";
inline constexpr char backends[] = "backends";
inline constexpr char samples[] = "samples";
inline constexpr char lost[] = "lost";
inline constexpr char throttled[] = "throttled";
inline constexpr char corrupt[] = "corrupt";
inline constexpr char oversize[] = "oversize";
inline constexpr char decode_errors[] = "decode_errors";
inline constexpr char dropped[] = "dropped";
inline constexpr char migrations[] = "migrations";
inline constexpr char recorder_samples[] = "recorder_samples";
inline constexpr char error[] = "error";
inline constexpr std::string_view fields[] = {tid,      start_ns,      end_ns,  backends,   samples,
                                              lost,     throttled,     corrupt, oversize,   decode_errors,
                                              dropped,  migrations,    recorder_samples,    error};
}  // namespace thread

// How often a thread was seen on a CPU (the cpu-clock backend).
namespace ran_on {
inline constexpr char rec[] = "ran_on";
inline constexpr char tid[] = "tid";
inline constexpr char cpu[] = "cpu";
inline constexpr char count[] = "count";
inline constexpr std::string_view fields[] = {tid, cpu, count};
}  // namespace ran_on

// A thread's memory accesses of one kind, aggregated.
namespace access {
inline constexpr char rec[] = "access";
inline constexpr char tid[] = "tid";
inline constexpr char backend[] = "backend";
inline constexpr char cpu[] = "cpu";
inline constexpr char level[] = "level";
inline constexpr char op[] = "op";
inline constexpr char node[] = "node";
inline constexpr char remote[] = "remote";
inline constexpr char hops[] = "hops";
inline constexpr char missed[] = "missed";
inline constexpr char count[] = "count";
inline constexpr char weight_sum[] = "weight_sum";
inline constexpr char weight_max[] = "weight_max";
inline constexpr char latency_histogram[] = "latency_histogram";
inline constexpr std::string_view fields[] = {tid,  backend, cpu,   level,      op,         node, remote,
                                              hops, missed,  count, weight_sum, weight_max, latency_histogram};
}  // namespace access

// A thread's PAPI counters.
namespace papi {
inline constexpr char rec[] = "papi";
inline constexpr char tid[] = "tid";
inline constexpr char cpu[] = "cpu";
inline constexpr char complete[] = "complete";
inline constexpr char counters[] = "counters";  // an object: counter name -> value
inline constexpr char error[] = "error";
inline constexpr std::string_view fields[] = {tid, cpu, complete, counters, error};
}  // namespace papi

// The last line: the summary is whole.
namespace end {
inline constexpr char rec[] = "end";
inline constexpr char threads[] = "threads";
inline constexpr std::string_view fields[] = {threads};
}  // namespace end

}  // namespace stacksage::sample_summary_schema
