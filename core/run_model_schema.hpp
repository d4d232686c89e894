// The shape of the merged model of a whole run: the names of its attributes
// with the type of their values, the words its kinds are made of, and the
// table of its keys that a Model interns once (Model::run_keys). Shared by
// the builder of its processes (parsers/process_model_builder.hpp: the
// analyzer's loader and the recorder's per-process models both use it), the
// analysis that reads it, and tests that build synthetic ones.
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

// Every attribute of the run model, declared once, in the order a Model
// interns them: X(type of its values, identifier, name in the model). The
// name constants (run_keys::pid, ...), the key table's members
// (RunModelKeys::pid, ...) and its iteration are made from these lists.
// (Their comments are /* */: a // comment would take the line's
// continuation with it.)
#define STACKSAGE_RUN_ATTRIBUTES(X)                                                                        \
    /* Process and Flow components. */                                                                     \
    X(std::int64_t, pid, "pid")                                                                            \
    X(std::int64_t, ppid, "ppid")                                                                          \
    X(std::int64_t, tid, "tid")                                                                            \
    /* absent when the process has none */                                                                 \
    X(std::int64_t, rank, "rank")                                                                          \
    /* launcher name ("mpirun"); launchers only */                                                         \
    X(std::string, launcher, "launcher")                                                                   \
    X(std::string, exe, "exe")                                                                             \
    /* arguments joined by spaces */                                                                       \
    X(std::string, cmdline, "cmdline")                                                                     \
    /* event-log file name(s) */                                                                           \
    X(std::string, log_file, "log")                                                                        \
    /* "exit", "_exit", "signal SIGKILL", "unknown", ... */                                                \
    X(std::string, end_how, "end_how")                                                                     \
    /* 1: an end event was recorded */                                                                     \
    X(std::int64_t, end_known, "end_known")                                                                \
    /* Why the process's log ends before its end was recorded: "killed" (its */                            \
    /* unused tail is still zero-filled: SIGKILL, the OOM killer), "log-stopped" */                        \
    /* (the log could not grow: log_stop_error says why), "unknown"; absent when */                        \
    /* the log is complete. */                                                                             \
    X(std::string, log_ends_early, "log_ends_early")                                                       \
    /* "No space left on device", ... */                                                                   \
    X(std::string, log_stop_error, "log_stop_error")                                                       \
    /* Flows: 1 when a thread of the kernel's task list at the process's end that */                       \
    /* the recorder never saw created (glibc's own threads, raw clones). */                                \
    X(std::int64_t, untraced, "untraced")                                                                  \
    X(std::int64_t, exit_status, "exit_status")                                                            \
    /* CPU time (user), µs */                                                                              \
    X(std::int64_t, utime_us, "utime_us")                                                                  \
    /* CPU time (system), µs */                                                                            \
    X(std::int64_t, stime_us, "stime_us")                                                                  \
    /* voluntary context switches (blocked) */                                                             \
    X(std::int64_t, nvcsw, "nvcsw")                                                                        \
    /* involuntary ones (preempted) */                                                                     \
    X(std::int64_t, nivcsw, "nivcsw")                                                                      \
    /* flows: ns it could run but waited for a CPU */                                                      \
    X(std::int64_t, run_delay_ns, "run_delay_ns")                                                          \
    /* flows: times it was put on a CPU */                                                                 \
    X(std::int64_t, run_slices, "run_slices")                                                              \
    /* 1: main thread's, derived from the process's */                                                     \
    X(std::int64_t, cpu_time_derived, "cpu_time_derived")                                                  \
    /* 1: read at the process's exit from a thread never joined: utime_us is user + system, stime_us 0. */ \
    X(std::int64_t, cpu_time_at_exit, "cpu_time_at_exit")                                                  \
    X(Cpuset, cgroup_cpuset, "cgroup_cpuset")                                                              \
    /* The main thread's mask as the program (the last exec'ed image) started: */                          \
    /* what the launcher, taskset or the parent bound it to. */                                            \
    X(Cpuset, program_start_cpuset, "program_start_cpuset")                                                \
    X(Cpuset, online_cpus, "online_cpus")                                                                  \
    /* When the program (the last exec'ed image) started: masks set before were */                         \
    /* set by its launcher or parent between fork and exec. */                                             \
    X(std::int64_t, program_start_ns, "program_start_ns")                                                  \
    /* Process components: the CPU quota of its cgroups (the smallest over its */                          \
    /* cgroup and the ancestors, quota / period CPUs) and the cgroup holding it; */                        \
    /* absent when none sets one. The throttling counters of that cgroup's */                              \
    /* cpu.stat at the process's start and end (cumulative over the cgroup, not */                         \
    /* the process): periods with runnable threads, periods held back, and the */                          \
    /* time held back in ns. */                                                                            \
    X(std::int64_t, cpu_quota_us, "cpu_quota_us")                                                          \
    X(std::int64_t, cpu_period_us, "cpu_period_us")                                                        \
    X(std::string, cpu_quota_cgroup, "cpu_quota_cgroup")                                                   \
    X(std::int64_t, cpu_periods_start, "cpu_periods_start")                                                \
    X(std::int64_t, cpu_throttled_start, "cpu_throttled_start")                                            \
    X(std::int64_t, cpu_throttled_ns_start, "cpu_throttled_ns_start")                                      \
    X(std::int64_t, cpu_periods_end, "cpu_periods_end")                                                    \
    X(std::int64_t, cpu_throttled_end, "cpu_throttled_end")                                                \
    X(std::int64_t, cpu_throttled_ns_end, "cpu_throttled_ns_end")                                          \
    X(std::int64_t, mpi_size, "mpi_size")                                                                  \
    X(std::int64_t, mpi_thread_level, "mpi_thread_level")                                                  \
    X(std::int64_t, mpi_init_ns, "mpi_init_ns")                                                            \
    X(std::int64_t, mpi_finalize_ns, "mpi_finalize_ns")                                                    \
    /* Flow components. */                                                                                 \
    X(std::int64_t, seq, "seq")                                                                            \
    X(std::int64_t, creator_tid, "creator_tid")                                                            \
    /* path of the module that called pthread_create */                                                    \
    X(std::string, creator_module, "creator_module")                                                       \
    /* path of the module of the start routine */                                                          \
    X(std::string, start_module, "start_module")                                                           \
    /* mask from the pthread attributes */                                                                 \
    X(Cpuset, attr_cpuset, "attr_cpuset")                                                                  \
    /* When the creator called pthread_create, and the creator's CPU time then */                          \
    /* (a reading of the creator's CPU-time curve, at most one per ms per creator). */                     \
    X(std::int64_t, create_ns, "create_ns")                                                                \
    X(std::int64_t, creator_cpu_ns, "creator_cpu_ns")                                                      \
    X(std::int64_t, last_cpu, "last_cpu")                                                                  \
    /* MayRunOn DataPaths: what set the mask of their interval. */                                         \
    /* the event: "thread_start", "affinity", "mpi_init", ... */                                           \
    X(std::string, set_by, "set_by")                                                                       \
    /* affinity calls: "pthread_setaffinity_np", "sched_setaffinity", "syscall" */                         \
    X(std::string, set_by_api, "set_by_api")                                                               \
    /* affinity calls: the calling thread */                                                               \
    X(std::int64_t, set_by_tid, "set_by_tid")                                                              \
    /* affinity calls: path of the calling module */                                                       \
    X(std::string, set_by_module, "set_by_module")                                                         \
    X(std::int64_t, wait_cpu_ns, "wait_cpu_ns")                                                            \
    /* Node components. */                                                                                 \
    /* to_string(TopologySource) */                                                                        \
    X(std::string, topology_source, "topology_source")                                                     \
    /* 1: the topology is restricted to a job (its cpuset is smaller than its */                           \
    /* complete_cpuset, as in a Slurm cgroup); 0: every PU that exists is usable. */                       \
    /* Set by the hwloc loader on every Node it makes. */                                                  \
    X(std::int64_t, job_restricted, "job_restricted")                                                      \
    /* hwloc's own host-name info attribute, when the topology file had one: set */                        \
    /* to the run's name of the host. */                                                                   \
    X(std::string, hwloc_host_name, "HostName")                                                            \
    /* The Topology root (from run.json). */                                                               \
    X(std::string, run_command, "run_command")                                                             \
    X(std::string, run_start, "run_start")                                                                 \
    X(std::string, run_tool_version, "run_tool_version")                                                   \
    X(std::string, run_job_id, "run_job_id")

// The attributes of sampled memory accesses (MemoryAccess and RanOn
// DataPaths; the Flow's samples_lost and migrations); their tid and pid are
// run_keys::tid and run_keys::pid.
#define STACKSAGE_MEMORY_ACCESS_ATTRIBUTES(X)                               \
    /* served-by level: to_string(MemoryLevel) */                           \
    X(std::string, level, "level")                                          \
    /* to_string(SampleBackend) */                                          \
    X(std::string, backend, "backend")                                      \
    X(std::int64_t, loads, "loads")                                         \
    X(std::int64_t, stores, "stores")                                       \
    /* samples that missed the named level */                               \
    X(std::int64_t, missed, "missed")                                       \
    /* total latency weight (cycles) */                                     \
    X(std::int64_t, weight_sum, "weight_sum")                               \
    X(std::int64_t, weight_max, "weight_max")                               \
    /* 16 counts, "n0,n1,...": bucket i >= 1 holds [2^(i-1), 2^i) cycles */ \
    X(std::string, latency_histogram, "latency_histogram")                  \
    /* OS index of the node holding the data; -1 unknown */                 \
    X(std::int64_t, numa_node, "numa_node")                                 \
    /* 1: served from outside the PU's NUMA node */                         \
    X(std::int64_t, remote, "remote")                                       \
    /* perf's mem_hops, the largest seen */                                 \
    X(std::int64_t, hops, "hops")                                           \
    /* PAPI count */                                                        \
    X(std::int64_t, misses, "misses")                                       \
    /* PAPI event name */                                                   \
    X(std::string, counter, "counter")                                      \
    /* RanOn: samples x the cpu-clock period */                             \
    X(std::int64_t, cpu_time_ns, "cpu_time_ns")                             \
    /* Flow: CPU changes between cpu-clock samples */                       \
    X(std::int64_t, migrations, "migrations")                               \
    /* Flow */                                                              \
    X(std::int64_t, samples_lost, "samples_lost")                           \
    /* MemoryAccess: the call site, innermost frame in user code: */        \
    /* "init_mesh (mesh.c:102)", "init_mesh in app", "app+0x1f40" */       \
    X(std::string, site, "site")                                            \
    /* the site's callers: "init_mesh (mesh.c:102) < main (mesh.c:140)" */  \
    X(std::string, call_path, "call_path")                                  \
    /* the data object: "heap block of 80 MiB allocated at mesh.c:88 in */  \
    /* init_mesh", "static `mesh` in app", "stack of thread 1234" */        \
    X(std::string, object, "object")                                        \
    /* "heap", "mmap", "static", "stack", "unknown" */                      \
    X(std::string, object_kind, "object_kind")

#define STACKSAGE_RUN_MODEL_NAME(T, id, name) inline constexpr AttrName<T> id{name};

namespace run_keys {
using Int = AttrName<std::int64_t>;
using Text = AttrName<std::string>;
using Set = AttrName<Cpuset>;

STACKSAGE_RUN_ATTRIBUTES(STACKSAGE_RUN_MODEL_NAME)

// Names outside the key table.
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
// WaitedFor DataPaths (a user DataPath type, interned by name).
inline constexpr std::string_view waited_for = "WaitedFor";
// run.json's "launch": the ranks and the hosts (comma-separated) the
// launcher was asked for.
inline constexpr Int run_launch_ranks{"run_launch_ranks"};
inline constexpr Text run_launch_hosts{"run_launch_hosts"};
}  // namespace run_keys

namespace memory_access_keys {
STACKSAGE_MEMORY_ACCESS_ATTRIBUTES(STACKSAGE_RUN_MODEL_NAME)
inline constexpr AttrName<std::int64_t> tid = run_keys::tid;
inline constexpr AttrName<std::int64_t> pid = run_keys::pid;
}  // namespace memory_access_keys

#undef STACKSAGE_RUN_MODEL_NAME

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
#define STACKSAGE_RUN_MODEL_KEY(T, id, name) Key<T> id;
    STACKSAGE_RUN_ATTRIBUTES(STACKSAGE_RUN_MODEL_KEY)
    STACKSAGE_MEMORY_ACCESS_ATTRIBUTES(STACKSAGE_RUN_MODEL_KEY)
#undef STACKSAGE_RUN_MODEL_KEY
    // WaitedFor DataPaths: their type (nullopt where the model has none).
    std::optional<DataPathType> waited_for;

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
