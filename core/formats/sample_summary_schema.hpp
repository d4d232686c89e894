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
// Where the accesses came from and what they touched (docs/sample-file.md,
// "Code and data"): ids of this summary's `site` and `object` records;
// absent when not known.
inline constexpr char site[] = "site";
inline constexpr char object[] = "object";
inline constexpr std::string_view fields[] = {tid,  backend, cpu,   level,      op,         node, remote,
                                              hops, missed,  count, weight_sum, weight_max, latency_histogram};
inline constexpr std::string_view optional_fields[] = {site, object};
}  // namespace access

// A mapping of the process's address space at the time the summary was
// written (and at exec), enough to give an instruction or data address a
// module and an offset after the run, and to find the module's file by its
// build id.
namespace module {
inline constexpr char rec[] = "module";
inline constexpr char id[] = "id";                    // referred to by site and object records
inline constexpr char path[] = "path";                // "" for an anonymous mapping
inline constexpr char start[] = "start";              // first address (a number)
inline constexpr char end[] = "end";                  // one past the last address
inline constexpr char file_offset[] = "file_offset";  // the file offset that `start` maps
inline constexpr char build_id[] = "build_id";        // hex of the ELF build id, "" when none
inline constexpr char kind[] = "kind";                // "file", "vdso", "anon_exec" (JIT), "unreadable"
inline constexpr char executable[] = "executable";    // the mapping is executable
inline constexpr std::string_view fields[] = {id, path, start, end, file_offset, build_id, kind, executable};
}  // namespace module

// A call site: where sampled accesses or tracked allocations were issued.
// The recorder keys sites in the process by the instruction address and the
// call path it could see (the kernel's frame-pointer chain); where that chain
// is not complete it keeps one copy of the user stack with its registers, to
// be unwound after the run.
namespace site {
inline constexpr char rec[] = "site";
inline constexpr char id[] = "id";
inline constexpr char ip[] = "ip";            // instruction address
inline constexpr char frames[] = "frames";    // return addresses, caller of ip first (a list of numbers)
inline constexpr char unwind[] = "unwind";    // "callchain": frames are the call path; "stack": unwind `stack`; "none"
inline constexpr char regs[] = "regs";        // {"ip":, "sp":, "bp":} user registers at the sample (with stack)
inline constexpr char stack[] = "stack";      // hex of the user stack copied from regs.sp up (with unwind "stack")
inline constexpr char samples[] = "samples";  // samples and allocations attributed to the site
inline constexpr std::string_view fields[] = {id, ip, frames, unwind, samples};
inline constexpr std::string_view optional_fields[] = {regs, stack};
}  // namespace site

// A data object: what a sampled data address belonged to.
namespace object {
inline constexpr char rec[] = "object";
inline constexpr char id[] = "id";
inline constexpr char kind[] = "kind";      // "heap", "mmap", "static", "stack", "unknown"
inline constexpr char site[] = "site";      // heap, mmap: the allocation's call site (a site id)
inline constexpr char module[] = "module";  // static: the module id holding the address
inline constexpr char offset[] = "offset";  // static: the address's offset in that module's file
inline constexpr char tid[] = "tid";        // stack: whose stack
inline constexpr char blocks[] = "blocks";  // heap, mmap: blocks allocated from the site
inline constexpr char bytes[] = "bytes";    // heap, mmap: their bytes in all; static: 0 (unknown)
inline constexpr std::string_view fields[] = {id, kind, blocks, bytes};
inline constexpr std::string_view optional_fields[] = {site, module, offset, tid};
}  // namespace object

// What the code-and-data attribution kept and what it could not (one line,
// after the sites and objects).
namespace attribution {
inline constexpr char rec[] = "attribution";
inline constexpr char sites[] = "sites";
inline constexpr char sites_dropped[] = "sites_dropped";      // samples whose site did not fit the table
inline constexpr char stacks[] = "stacks";                    // stack copies kept
inline constexpr char stacks_dropped[] = "stacks_dropped";    // sites that wanted one and got none
inline constexpr char objects[] = "objects";
inline constexpr char objects_dropped[] = "objects_dropped";  // allocations whose site did not fit
inline constexpr char min_block_bytes[] = "min_block_bytes";  // allocations below it are not tracked
inline constexpr char allocations_tracked[] = "allocations_tracked";
inline constexpr std::string_view fields[] = {sites,           sites_dropped,   stacks,
                                              stacks_dropped,  objects,         objects_dropped,
                                              min_block_bytes, allocations_tracked};
}  // namespace attribution

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
