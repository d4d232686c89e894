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
