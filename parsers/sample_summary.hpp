// Reading a process's sampling summary (OUT/<host>/<log stem>.samples.jsonl,
// written by preload/sampling/summary_writer.cpp; format in
// docs/sample-file.md): which backends ran and why the others did not, and
// per thread its losses, aggregated memory accesses, "ran on" counts and
// PAPI counts.
//
// Like event logs, summaries come from real runs: a torn last line is
// ignored (and said), unknown records and fields are skipped, a newer
// version is read as far as this reader knows it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/formats/sample_summary_schema.hpp"
#include "core/result.hpp"

namespace stacksage {

inline constexpr int kSampleSummaryVersion = sample_summary_schema::kVersion;
inline constexpr int kSampleLatencyBuckets = 16;

struct SampledBackend {
    std::string name;        // "pebs", "ibs", "pagefault", "cpuclock", "papi"
    bool requested = false;
    bool available = false;  // the plan said it could work here
    std::string reason;      // why not, when !available
    std::uint64_t threads_opened = 0;
    std::uint64_t threads_failed = 0;  // threads where the kernel refused it after all
    std::string error;       // the first refusal
};

struct SampledThread {
    std::int64_t tid = 0;
    std::uint64_t start_ns = 0, end_ns = 0;
    std::vector<std::string> backends;
    std::uint64_t samples = 0, lost = 0, throttled = 0, corrupt = 0, dropped = 0, migrations = 0;
    std::string error;
};

struct SampledAccess {
    std::int64_t tid = 0;
    std::string backend;
    std::int64_t cpu = -1;
    std::string level;  // "L1", "fill_buffer", "L2", "L3", "L4", "peer_cache", "remote_cache",
                        // "local_dram", "remote_dram", "pmem", "cxl", "memory_side_cache", "io",
                        // "uncached", "unknown"
    std::string op;     // "load", "store", "prefetch", "exec", "unknown"
    std::int64_t node = -1;  // NUMA node holding the address, -1 unknown
    bool remote = false;
    std::int64_t hops = 0;
    bool missed = false;
    std::uint64_t count = 0, weight_sum = 0, weight_max = 0;
    std::array<std::uint64_t, kSampleLatencyBuckets> latency_histogram{};
    std::int64_t site = -1;    // a SampledSite id, -1 unknown
    std::int64_t object = -1;  // a SampledObject id, -1 unknown
};

// A mapping of the sampled process (sample_summary_schema::module).
struct SampledModule {
    std::int64_t id = -1;
    std::string path;  // "" anonymous
    std::uint64_t start = 0, end = 0, file_offset = 0;
    std::string build_id;  // hex, "" none
    std::string kind;      // "file", "vdso", "anon_exec", "unreadable"
    bool executable = false;
};

// A call site (sample_summary_schema::site).
struct SampledSite {
    std::int64_t id = -1;
    std::uint64_t ip = 0;
    std::vector<std::uint64_t> frames;  // return addresses, caller of ip first
    std::string unwind;                 // "callchain", "stack", "none"
    std::uint64_t reg_ip = 0, reg_sp = 0, reg_bp = 0;  // with a stack copy
    std::vector<std::uint8_t> stack;                   // user stack from reg_sp up; empty: none
    std::uint64_t samples = 0;
};

// A data object (sample_summary_schema::object).
struct SampledObject {
    std::int64_t id = -1;
    std::string kind;         // "heap", "mmap", "static", "stack", "unknown"
    std::int64_t site = -1;   // heap, mmap: the allocation site
    std::int64_t module = -1; // static: the module holding it
    std::uint64_t offset = 0; // static: offset in the module's file
    std::int64_t tid = 0;     // stack: whose
    std::uint64_t blocks = 0, bytes = 0;
};

// What attribution kept and dropped (sample_summary_schema::attribution).
struct SampledAttribution {
    bool present = false;
    std::uint64_t sites = 0, sites_dropped = 0, stacks = 0, stacks_dropped = 0;
    std::uint64_t objects = 0, objects_dropped = 0, min_block_bytes = 0, allocations_tracked = 0;
};

struct SampledRanOn {
    std::int64_t tid = 0;
    std::int64_t cpu = -1;
    std::uint64_t count = 0;
};

struct SampledPapi {
    std::int64_t tid = 0;
    std::int64_t cpu = -1;  // where the thread was when its counters were read; -1 unknown
    bool complete = true;   // false: the thread was still running at exit, counts not read
    std::map<std::string, std::uint64_t> counters;  // "PAPI_L1_DCM" -> misses
    std::string error;
};

struct SampleSummary {
    std::string path;
    int version = 0;
    std::int64_t pid = 0;
    std::string host;
    std::uint64_t start_ns = 0, end_ns = 0;
    std::vector<std::string> used;      // backends that ran
    std::string requested;              // "auto" or the list, comma-separated
    std::uint64_t pagefault_period = 0, cpuclock_period_ns = 0, pebs_period = 0, ibs_period = 0;
    std::uint64_t unsampled_threads = 0;
    std::string raw_file;               // "" when none
    std::vector<SampledBackend> backends;
    std::vector<SampledThread> threads;
    std::vector<SampledAccess> accesses;
    std::vector<SampledRanOn> ran_on;
    std::vector<SampledPapi> papi;
    std::vector<SampledModule> modules;
    std::vector<SampledSite> sites;
    std::vector<SampledObject> objects;
    SampledAttribution attribution;
    bool complete = false;              // the "end" record was read
    bool torn_last_line = false;

    const SampledBackend* backend(const std::string& name) const;
};

// \return the summary.
// \return an Error "<path>: cannot be read: <why>" when the file cannot be
//         read (input_file.hpp: not a regular file, larger than
//         input_limits::kSampleSummary), or "<path>: line N: <why>" when it is
//         not a sampling summary (no "sampling" record first) or has a bad
//         line before the last.
Result<SampleSummary> read_sample_summary(const std::string& path);
// As read_sample_summary, on text already read (a stream of OUT/<host>/node.samples);
// path names it in messages.
Result<SampleSummary> parse_sample_summary(std::string_view text, const std::string& path);

}  // namespace stacksage
