// The shape of the merged model of a whole run, shared by the loader that
// builds it (run_loader.hpp), the analysis that reads it, and tests that
// build synthetic ones.
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
//                                 keys::start_ns / keys::end_ns
//   Flow ─RanOn→    Thread (PU)   where the flow was seen running, keys::count
//   Flow ─WaitedFor→ Flow          a wait the recorder saw (pthread_join) for
//                                 the target flow (the Process when the target
//                                 is unknown): keys::start_ns / keys::end_ns,
//                                 wait_cpu_ns (the waiter's CPU time by then)
//
// Times are the recording host's CLOCK_MONOTONIC in ns: comparable between
// flows of one host, not between hosts.
//
// These are names, interned on use, not constants of core/attribute_keys.hpp:
// those are interned first by every Model (and fixed in every snapshot),
// while only run models carry these.
#pragma once

#include <string_view>

namespace stacksage::run_keys {

// Process and Flow components.
inline constexpr std::string_view pid = "pid";
inline constexpr std::string_view ppid = "ppid";
inline constexpr std::string_view tid = "tid";
inline constexpr std::string_view rank = "rank";                  // absent when the process has none
inline constexpr std::string_view launcher = "launcher";          // launcher name ("mpirun"); launchers only
inline constexpr std::string_view exe = "exe";
inline constexpr std::string_view cmdline = "cmdline";            // arguments joined by spaces
inline constexpr std::string_view log_file = "log";               // event-log file name(s)
inline constexpr std::string_view end_how = "end_how";            // "exit", "_exit", "signal SIGKILL", "unknown", ...
inline constexpr std::string_view end_known = "end_known";        // 1: an end event was recorded
inline constexpr std::string_view exit_status = "exit_status";
inline constexpr std::string_view utime_us = "utime_us";          // CPU time (user), µs
inline constexpr std::string_view stime_us = "stime_us";          // CPU time (system), µs
inline constexpr std::string_view nvcsw = "nvcsw";                // voluntary context switches (blocked)
inline constexpr std::string_view nivcsw = "nivcsw";              // involuntary ones (preempted)
inline constexpr std::string_view run_delay_ns = "run_delay_ns";  // flows: ns it could run but waited for a CPU
inline constexpr std::string_view run_slices = "run_slices";      // flows: times it was put on a CPU
inline constexpr std::string_view cpu_time_derived = "cpu_time_derived";  // 1: main thread's, derived from the process's
// 1: read at the process's exit from a thread never joined: utime_us is user + system, stime_us 0.
inline constexpr std::string_view cpu_time_at_exit = "cpu_time_at_exit";
inline constexpr std::string_view cgroup_cpuset = "cgroup_cpuset";
// The main thread's mask as the program (the last exec'ed image) started:
// what the launcher, taskset or the parent bound it to.
inline constexpr std::string_view program_start_cpuset = "program_start_cpuset";
inline constexpr std::string_view online_cpus = "online_cpus";
inline constexpr std::string_view mpi_size = "mpi_size";
inline constexpr std::string_view mpi_thread_level = "mpi_thread_level";
inline constexpr std::string_view mpi_init_ns = "mpi_init_ns";
inline constexpr std::string_view mpi_finalize_ns = "mpi_finalize_ns";
inline constexpr std::string_view env_prefix = "env:";            // "env:OMP_NUM_THREADS" = "4"
inline constexpr std::string_view identity_prefix = "id:";        // "id:SLURM_JOB_ID" = "1234"
// Flow components.
inline constexpr std::string_view seq = "seq";
inline constexpr std::string_view creator_tid = "creator_tid";
inline constexpr std::string_view creator_module = "creator_module";  // path of the module that called pthread_create
inline constexpr std::string_view start_module = "start_module";      // path of the module of the start routine
inline constexpr std::string_view attr_cpuset = "attr_cpuset";        // mask from the pthread attributes
// When the creator called pthread_create, and the creator's CPU time then
// (a reading of the creator's CPU-time curve, at most one per ms per creator).
inline constexpr std::string_view create_ns = "create_ns";
inline constexpr std::string_view creator_cpu_ns = "creator_cpu_ns";
inline constexpr std::string_view last_cpu = "last_cpu";
// WaitedFor DataPaths (a user DataPath type, interned by name).
inline constexpr std::string_view waited_for = "WaitedFor";
inline constexpr std::string_view wait_cpu_ns = "wait_cpu_ns";
// Node components.
inline constexpr std::string_view topology_source = "topology_source";
// The Topology root (from run.json).
inline constexpr std::string_view run_command = "run_command";
inline constexpr std::string_view run_start = "run_start";
inline constexpr std::string_view run_tool_version = "run_tool_version";
inline constexpr std::string_view run_job_id = "run_job_id";

inline constexpr std::string_view kind_process = "process";
inline constexpr std::string_view kind_launcher = "launcher";
inline constexpr std::string_view kind_main = "main";
inline constexpr std::string_view kind_thread = "thread";
inline constexpr std::string_view kind_discovered = "discovered";
inline constexpr std::string_view source_hwloc = "hwloc";
inline constexpr std::string_view source_cpusets = "cpusets-seen";

}  // namespace stacksage::run_keys
