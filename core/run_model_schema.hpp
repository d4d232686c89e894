// The shape of the merged model of a whole run: the names of its attributes
// with the type of their values, the words its kinds are made of, and the
// table of its keys that a Model interns once (Model::run_keys). Shared by
// the loader that builds it (parsers/run_loader.hpp), the recorder's
// per-process models (preload/process_model_builder.hpp), the analysis that
// reads it, and tests that build synthetic ones.
//
//   Topology  (name: the run directory; run_* attributes from run.json)
//   └─ Node   one per host: its hwloc subtree; keys::hostname;
//             topology_source = "hwloc" or "cpusets-seen" (no topology file)
//   Process   one root per process (per host and pid, exec'ed images merged);
//             kind "process" or "launcher"; name: the executable's base name
//   └─ Flow   one per thread of execution; os_index = tid; name = thread name;
//             kind "main" (the process's first thread), "thread" (seen
//             created), "discovered" (first seen in a snapshot)
//
//   Flow ─MayRunOn→ Thread (PU)   one path per PU per affinity interval,
//                                 keys::start_ns / keys::end_ns; set_by (the
//                                 event that set the mask), and for masks an
//                                 affinity call set: set_by_api, set_by_tid
//                                 (the caller), set_by_module (its module)
//   Flow ─RanOn→    Thread (PU)   where the flow was seen running, keys::count
//   Flow ─WaitedFor→ Flow          a wait the recorder saw (pthread_join) for
//                                 the target flow (the Process when the target
//                                 is unknown): keys::start_ns / keys::end_ns,
//                                 wait_cpu_ns (the waiter's CPU time by then)
//   PU ─MemoryAccess→ cache, NUMA node or Node
//                                 sampled memory accesses (memory_access_keys
//                                 below; parsers/memory_access_paths.hpp says
//                                 which component serves which level)
//
// Times are the recording host's CLOCK_MONOTONIC in ns: comparable between
// flows of one host, not between hosts.
//
// These are names, interned on use, not constants of core/attribute_keys.hpp:
// those are interned first by every Model (and fixed in every snapshot),
// while only run models carry these.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/datapath_type.hpp"
#include "core/typed_key.hpp"

namespace stacksage {

class Model;

namespace run_keys {
using Int = AttrName<std::int64_t>;
using Text = AttrName<std::string>;
using Set = AttrName<Cpuset>;

// Process and Flow components.
inline constexpr Int pid{"pid"};
inline constexpr Int ppid{"ppid"};
inline constexpr Int tid{"tid"};
inline constexpr Int rank{"rank"};                        // absent when the process has none
inline constexpr Text launcher{"launcher"};               // launcher name ("mpirun"); launchers only
inline constexpr Text exe{"exe"};
inline constexpr Text cmdline{"cmdline"};                 // arguments joined by spaces
inline constexpr Text log_file{"log"};                    // event-log file name(s)
inline constexpr Text end_how{"end_how"};                 // "exit", "_exit", "signal SIGKILL", "unknown", ...
inline constexpr Int end_known{"end_known"};              // 1: an end event was recorded
// Why the process's log ends before its end was recorded: "killed" (its
// unused tail is still zero-filled: SIGKILL, the OOM killer), "log-stopped"
// (the log could not grow: log_stop_error says why), "unknown"; absent when
// the log is complete.
inline constexpr Text log_ends_early{"log_ends_early"};
inline constexpr Text log_stop_error{"log_stop_error"};   // "No space left on device", ...
// Flows: 1 when a thread of the kernel's task list at the process's end that
// the recorder never saw created (glibc's own threads, raw clones).
inline constexpr Int untraced{"untraced"};
inline constexpr Int exit_status{"exit_status"};
inline constexpr Int utime_us{"utime_us"};                // CPU time (user), µs
inline constexpr Int stime_us{"stime_us"};                // CPU time (system), µs
inline constexpr Int nvcsw{"nvcsw"};                      // voluntary context switches (blocked)
inline constexpr Int nivcsw{"nivcsw"};                    // involuntary ones (preempted)
inline constexpr Int run_delay_ns{"run_delay_ns"};        // flows: ns it could run but waited for a CPU
inline constexpr Int run_slices{"run_slices"};            // flows: times it was put on a CPU
inline constexpr Int cpu_time_derived{"cpu_time_derived"};  // 1: main thread's, derived from the process's
// 1: read at the process's exit from a thread never joined: utime_us is user + system, stime_us 0.
inline constexpr Int cpu_time_at_exit{"cpu_time_at_exit"};
inline constexpr Set cgroup_cpuset{"cgroup_cpuset"};
// The main thread's mask as the program (the last exec'ed image) started:
// what the launcher, taskset or the parent bound it to.
inline constexpr Set program_start_cpuset{"program_start_cpuset"};
// When the program (the last exec'ed image) started: masks set before were
// set by its launcher or parent between fork and exec.
inline constexpr Int program_start_ns{"program_start_ns"};
inline constexpr Set online_cpus{"online_cpus"};
// Process components: the CPU quota of its cgroups (the smallest over its
// cgroup and the ancestors, quota / period CPUs) and the cgroup holding it;
// absent when none sets one. The throttling counters of that cgroup's
// cpu.stat at the process's start and end (cumulative over the cgroup, not
// the process): periods with runnable threads, periods held back, and the
// time held back in ns.
inline constexpr Int cpu_quota_us{"cpu_quota_us"};
inline constexpr Int cpu_period_us{"cpu_period_us"};
inline constexpr Text cpu_quota_cgroup{"cpu_quota_cgroup"};
inline constexpr Int cpu_periods_start{"cpu_periods_start"};
inline constexpr Int cpu_throttled_start{"cpu_throttled_start"};
inline constexpr Int cpu_throttled_ns_start{"cpu_throttled_ns_start"};
inline constexpr Int cpu_periods_end{"cpu_periods_end"};
inline constexpr Int cpu_throttled_end{"cpu_throttled_end"};
inline constexpr Int cpu_throttled_ns_end{"cpu_throttled_ns_end"};
inline constexpr Int mpi_size{"mpi_size"};
inline constexpr Int mpi_thread_level{"mpi_thread_level"};
inline constexpr Int mpi_init_ns{"mpi_init_ns"};
inline constexpr Int mpi_finalize_ns{"mpi_finalize_ns"};
// Prefixes of string attributes named by the run: "env:OMP_NUM_THREADS" =
// "4", "id:SLURM_JOB_ID" = "1234".
inline constexpr std::string_view env_prefix = "env:";
inline constexpr std::string_view identity_prefix = "id:";
// Process components: the live watcher's warnings the process gave
// (parsers/live_warning.hpp), one set per condition, the condition after the
// prefix: "live:oversubscribed" = what it said, "live_ns:..." = when,
// "live_since_ns:..." = since when it held, "live_cpus:..." = the CPUs
// (a cpuset), "live_fix:..." = the fix.
inline constexpr std::string_view live_message_prefix = "live:";
inline constexpr std::string_view live_ns_prefix = "live_ns:";
inline constexpr std::string_view live_since_ns_prefix = "live_since_ns:";
inline constexpr std::string_view live_cpus_prefix = "live_cpus:";
inline constexpr std::string_view live_fix_prefix = "live_fix:";
// Flow components.
inline constexpr Int seq{"seq"};
inline constexpr Int creator_tid{"creator_tid"};
inline constexpr Text creator_module{"creator_module"};   // path of the module that called pthread_create
inline constexpr Text start_module{"start_module"};       // path of the module of the start routine
inline constexpr Set attr_cpuset{"attr_cpuset"};          // mask from the pthread attributes
// When the creator called pthread_create, and the creator's CPU time then
// (a reading of the creator's CPU-time curve, at most one per ms per creator).
inline constexpr Int create_ns{"create_ns"};
inline constexpr Int creator_cpu_ns{"creator_cpu_ns"};
inline constexpr Int last_cpu{"last_cpu"};
// MayRunOn DataPaths: what set the mask of their interval.
inline constexpr Text set_by{"set_by"};                   // the event: "thread_start", "affinity", "mpi_init", ...
inline constexpr Text set_by_api{"set_by_api"};           // affinity calls: "pthread_setaffinity_np", "sched_setaffinity", "syscall"
inline constexpr Int set_by_tid{"set_by_tid"};            // affinity calls: the calling thread
inline constexpr Text set_by_module{"set_by_module"};     // affinity calls: path of the calling module
// WaitedFor DataPaths (a user DataPath type, interned by name).
inline constexpr std::string_view waited_for = "WaitedFor";
inline constexpr Int wait_cpu_ns{"wait_cpu_ns"};
// Node components.
inline constexpr Text topology_source{"topology_source"};  // to_string(TopologySource)
// 1: the topology is restricted to a job (its cpuset is smaller than its
// complete_cpuset, as in a Slurm cgroup); 0: every PU that exists is usable.
// Set by the hwloc loader on every Node it makes.
inline constexpr Int job_restricted{"job_restricted"};
// hwloc's own host-name info attribute, when the topology file had one: set
// to the run's name of the host.
inline constexpr Text hwloc_host_name{"HostName"};
// The Topology root (from run.json).
inline constexpr Text run_command{"run_command"};
inline constexpr Text run_start{"run_start"};
inline constexpr Text run_tool_version{"run_tool_version"};
inline constexpr Text run_job_id{"run_job_id"};
// run.json's "launch": the ranks and the hosts (comma-separated) the
// launcher was asked for.
inline constexpr Int run_launch_ranks{"run_launch_ranks"};
inline constexpr Text run_launch_hosts{"run_launch_hosts"};
}  // namespace run_keys

// Sampled memory accesses (parsers/memory_access_paths.hpp): attributes of
// MemoryAccess paths PU -> serving component, of RanOn paths from the
// cpu-clock sampler, and of the sampled Flows.
namespace memory_access_keys {
using Int = AttrName<std::int64_t>;
using Text = AttrName<std::string>;
inline constexpr Text level{"level"};                  // served-by level: to_string(MemoryLevel)
inline constexpr Text backend{"backend"};              // to_string(SampleBackend)
inline constexpr Int loads{"loads"};
inline constexpr Int stores{"stores"};
inline constexpr Int missed{"missed"};                 // samples that missed the named level
inline constexpr Int weight_sum{"weight_sum"};         // total latency weight (cycles)
inline constexpr Int weight_max{"weight_max"};
inline constexpr Text latency_histogram{"latency_histogram"};  // 16 counts, "n0,n1,...": bucket i >= 1 holds [2^(i-1), 2^i) cycles
inline constexpr Int numa_node{"numa_node"};           // OS index of the node holding the data; -1 unknown
inline constexpr Int remote{"remote"};                 // 1: served from outside the PU's NUMA node
inline constexpr Int hops{"hops"};                     // perf's mem_hops, the largest seen
inline constexpr Int tid{"tid"};
inline constexpr Int pid{"pid"};
inline constexpr Int misses{"misses"};                 // PAPI count
inline constexpr Text counter{"counter"};              // PAPI event name
inline constexpr Int cpu_time_ns{"cpu_time_ns"};       // RanOn: samples x the cpu-clock period
inline constexpr Int migrations{"migrations"};         // Flow: CPU changes between cpu-clock samples
inline constexpr Int samples_lost{"samples_lost"};     // Flow
}  // namespace memory_access_keys

// The kinds of Process components.
enum class ProcessKind : std::uint8_t { Process, Launcher };
// The kinds of Flow components.
enum class FlowKind : std::uint8_t {
    Main,        // the process's first thread
    Thread,      // seen created
    Discovered,  // first seen in a snapshot
    // The CPU time of threads that ended before the recorder saw them (glibc's
    // own threads for SIGEV_THREAD timers and aio, raw clones): the process's
    // total less every thread's known time. One per process, standing for
    // them all: not a thread of its own in counts.
    Unseen,
};
// Where a Node's topology came from (run_keys::topology_source).
enum class TopologySource : std::uint8_t {
    Hwloc,        // the host's topology file
    CpusetsSeen,  // no usable file: rebuilt from the cpusets its processes had
};

// The word each stands for in the model: "process", "launcher"; "main",
// "thread", "discovered"; "hwloc", "cpusets-seen".
std::string_view to_string(ProcessKind kind);
std::string_view to_string(FlowKind kind);
std::string_view to_string(TopologySource source);
// \return the value whose word is `word`; nullopt for any other word.
std::optional<ProcessKind> process_kind_from_string(std::string_view word);
std::optional<FlowKind> flow_kind_from_string(std::string_view word);
std::optional<TopologySource> topology_source_from_string(std::string_view word);

// The run model's keys in one Model, typed as the names above. Models hand
// out one table each (Model::run_keys, Model::intern_run_keys) instead of
// every reader and writer looking the names up again.
struct RunModelKeys {
    // Process and Flow components.
    Key<std::int64_t> pid, ppid, tid, rank;
    Key<std::string> launcher, exe, cmdline, log_file, end_how, log_ends_early, log_stop_error;
    Key<std::int64_t> end_known, exit_status, utime_us, stime_us, nvcsw, nivcsw, run_delay_ns, run_slices,
        cpu_time_derived, cpu_time_at_exit, untraced;
    Key<Cpuset> cgroup_cpuset, program_start_cpuset, online_cpus;
    Key<std::int64_t> cpu_quota_us, cpu_period_us;
    Key<std::string> cpu_quota_cgroup;
    Key<std::int64_t> cpu_periods_start, cpu_throttled_start, cpu_throttled_ns_start, cpu_periods_end,
        cpu_throttled_end, cpu_throttled_ns_end;
    Key<std::int64_t> mpi_size, mpi_thread_level, mpi_init_ns, mpi_finalize_ns;
    Key<std::int64_t> program_start_ns;
    // Flow components.
    Key<std::int64_t> seq, creator_tid;
    Key<std::string> creator_module, start_module;
    Key<Cpuset> attr_cpuset;
    Key<std::int64_t> create_ns, creator_cpu_ns, last_cpu;
    // MayRunOn DataPaths: what set their interval's mask.
    Key<std::string> set_by, set_by_api, set_by_module;
    Key<std::int64_t> set_by_tid;
    // WaitedFor DataPaths: their type (nullopt where the model has none) and CPU time.
    std::optional<DataPathType> waited_for;
    Key<std::int64_t> wait_cpu_ns;
    // Node components.
    Key<std::string> topology_source;
    Key<std::int64_t> job_restricted;
    Key<std::string> hwloc_host_name;
    // The Topology root.
    Key<std::string> run_command, run_start, run_tool_version, run_job_id;
    // Sampled memory accesses (memory_access_keys).
    Key<std::string> level, backend;
    Key<std::int64_t> loads, stores, missed, weight_sum, weight_max;
    Key<std::string> latency_histogram;
    Key<std::int64_t> numa_node, remote, hops, misses;
    Key<std::string> counter;
    Key<std::int64_t> cpu_time_ns, migrations, samples_lost;

    // Every name above interned into model (DataPath type included).
    static RunModelKeys interned(Model& model);
    // The names model has; the others absent (Key::present() false).
    static RunModelKeys found(const Model& model);
    // True when every key is present (a table from interned()).
    bool complete() const;
    // Calls fn(name, key) for every attribute name above and its key here,
    // in a fixed order (tid and pid once: the sampled paths share them).
    void for_each(const std::function<void(std::string_view name, AttrKey key)>& fn) const;
};

}  // namespace stacksage
