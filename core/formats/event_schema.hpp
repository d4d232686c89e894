// The event log's schema (docs/event-log.md): every event's name and the
// names of its fields, shared by the recorder that writes the logs
// (preload/) and the parsers that read them. A name spelled in one place
// cannot drift between the writer and the reader.
//
// Header-only and constexpr: the recorder, built without exceptions and
// without libstdc++'s runtime, uses the char arrays as they are (their
// lengths are known at compile time); readers look events up by kind.
//
// Each event has a namespace holding `event`, its name, and its fields, each
// named as the field it stands for ("errno" is `errno_`: errno is a macro);
// `fields` lists them all, for tests that hold a log against the schema.
// Objects nested in a field have a namespace of their own
// (`mpi_snapshot::thread`). The fields every event has are in `common`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace stacksage::event_schema {

// The "v" of every line. A change that breaks readers increments it; new
// events and fields do not (readers ignore what they do not know).
inline constexpr int kVersion = 1;

// Fields every event has.
namespace common {
inline constexpr char v[] = "v";
inline constexpr char ev[] = "ev";
inline constexpr char t[] = "t";
inline constexpr char pid[] = "pid";
inline constexpr char tid[] = "tid";
// Only in the short line that replaces an event too long for the recorder.
inline constexpr char truncated[] = "truncated";
inline constexpr std::string_view fields[] = {v, ev, t, pid, tid, truncated};
}  // namespace common

namespace process_start {
inline constexpr char event[] = "process_start";
inline constexpr char origin[] = "origin";
// true in the child of a fork the recorder's interposers did not see
// (_Fork(), syscall(SYS_fork), clone() without CLONE_VM, glibc's own forks):
// found at its first event, when the start's times are read.
inline constexpr char unseen_fork[] = "unseen_fork";
inline constexpr char image[] = "image";
inline constexpr char initialised_by[] = "initialised_by";
inline constexpr char ppid[] = "ppid";
inline constexpr char host[] = "host";
inline constexpr char rank[] = "rank";
inline constexpr char launcher[] = "launcher";
inline constexpr char exe[] = "exe";
inline constexpr char cmdline[] = "cmdline";
inline constexpr char cmdline_truncated[] = "cmdline_truncated";
inline constexpr char realtime_ns[] = "realtime_ns";
inline constexpr char monotonic_ns[] = "monotonic_ns";
inline constexpr char cpuset[] = "cpuset";
inline constexpr char cpu[] = "cpu";
inline constexpr char cgroup_cpuset[] = "cgroup_cpuset";
inline constexpr char online_cpus[] = "online_cpus";
// The CPU quota of the process's cgroups (the smallest over its cgroup and
// its ancestors) and the throttling counters of the cgroup holding it:
// absent when no cgroup sets a quota. The same fields are in process_end.
inline constexpr char cpu_quota_us[] = "cpu_quota_us";
inline constexpr char cpu_period_us[] = "cpu_period_us";
inline constexpr char cpu_quota_cgroup[] = "cpu_quota_cgroup";
inline constexpr char cpu_periods[] = "cpu_periods";
inline constexpr char cpu_throttled[] = "cpu_throttled";
inline constexpr char cpu_throttled_ns[] = "cpu_throttled_ns";
inline constexpr char log[] = "log";
inline constexpr char stream[] = "stream";
inline constexpr char env[] = "env";            // an object: variable name -> value
inline constexpr char identity[] = "identity";  // likewise
inline constexpr char tracer[] = "tracer";      // an object: tracer_info
inline constexpr std::string_view fields[] = {
    origin, unseen_fork, image, initialised_by, ppid, host, rank, launcher, exe, cmdline, cmdline_truncated, realtime_ns,
    monotonic_ns, cpuset, cpu, cgroup_cpuset, online_cpus, cpu_quota_us, cpu_period_us, cpu_quota_cgroup,
    cpu_periods, cpu_throttled, cpu_throttled_ns, log, stream, env, identity, tracer};
namespace tracer_info {
inline constexpr char version[] = "version";
inline constexpr char schema[] = "schema";
inline constexpr std::string_view fields[] = {version, schema};
}  // namespace tracer_info
}  // namespace process_start

namespace process_end {
inline constexpr char event[] = "process_end";
inline constexpr char how[] = "how";
inline constexpr char status[] = "status";
inline constexpr char utime_us[] = "utime_us";
inline constexpr char stime_us[] = "stime_us";
inline constexpr char nvcsw[] = "nvcsw";
inline constexpr char nivcsw[] = "nivcsw";
inline constexpr char minflt[] = "minflt";
inline constexpr char majflt[] = "majflt";
inline constexpr char maxrss_kb[] = "maxrss_kb";
inline constexpr char main_cpu_us[] = "main_cpu_us";
inline constexpr char main_run_delay_ns[] = "main_run_delay_ns";
inline constexpr char main_run_slices[] = "main_run_slices";
inline constexpr char threads_created[] = "threads_created";
inline constexpr char threads_untraced[] = "threads_untraced";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr char interrupted_recorder[] = "interrupted_recorder";
// CPU time of the recorder's own threads alive at the end (the sampler's
// drain thread): in utime_us/stime_us, and not the application's.
inline constexpr char recorder_cpu_us[] = "recorder_cpu_us";
// how = "signal": written by the fatal-signal path before the default action; the signal's number.
inline constexpr char signal[] = "signal";
inline constexpr char cpu_quota_us[] = "cpu_quota_us";  // as in process_start, read again at the end
inline constexpr char cpu_period_us[] = "cpu_period_us";
inline constexpr char cpu_quota_cgroup[] = "cpu_quota_cgroup";
inline constexpr char cpu_periods[] = "cpu_periods";
inline constexpr char cpu_throttled[] = "cpu_throttled";
inline constexpr char cpu_throttled_ns[] = "cpu_throttled_ns";
inline constexpr std::string_view fields[] = {
    how, status, utime_us, stime_us, nvcsw, nivcsw, minflt, majflt, maxrss_kb, main_cpu_us,
    main_run_delay_ns, main_run_slices, threads_created, threads_untraced, duration_ns, interrupted_recorder,
    recorder_cpu_us, signal, cpu_quota_us, cpu_period_us, cpu_quota_cgroup, cpu_periods, cpu_throttled, cpu_throttled_ns};
}  // namespace process_end

namespace fork {
inline constexpr char event[] = "fork";
inline constexpr char child_pid[] = "child_pid";
inline constexpr std::string_view fields[] = {child_pid};
}  // namespace fork

namespace fork_failed {
inline constexpr char event[] = "fork_failed";
inline constexpr char errno_[] = "errno";
inline constexpr std::string_view fields[] = {errno_};
}  // namespace fork_failed

namespace exec {
inline constexpr char event[] = "exec";
inline constexpr char path[] = "path";
inline constexpr char argv[] = "argv";
inline constexpr char argc[] = "argc";
// Why the next image will not be recorded (the environment passed to exec
// does not carry the recorder: clearenv(), LD_PRELOAD changed); absent when
// it will be.
inline constexpr char untraced[] = "untraced";
inline constexpr std::string_view fields[] = {path, argv, argc, untraced};
}  // namespace exec

namespace exec_failed {
inline constexpr char event[] = "exec_failed";
inline constexpr char path[] = "path";
inline constexpr char errno_[] = "errno";
inline constexpr std::string_view fields[] = {path, errno_};
}  // namespace exec_failed

namespace thread_start {
inline constexpr char event[] = "thread_start";
inline constexpr char seq[] = "seq";
inline constexpr char pthread[] = "pthread";
inline constexpr char creator_tid[] = "creator_tid";
inline constexpr char creator_module[] = "creator_module";
inline constexpr char start_module[] = "start_module";
inline constexpr char start_offset[] = "start_offset";
inline constexpr char create_t[] = "create_t";
inline constexpr char creator_cpu_ns[] = "creator_cpu_ns";
inline constexpr char attr_cpuset[] = "attr_cpuset";
inline constexpr char cpuset[] = "cpuset";
inline constexpr char cpu[] = "cpu";
// Only in the line of a thread that ended within 1 ms of its start, which is
// then its one line (no thread_end): when it ended, how, its last CPU, and
// its life (as in thread_end).
inline constexpr char end_t[] = "end_t";
inline constexpr char how[] = "how";
inline constexpr char end_cpu[] = "end_cpu";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr std::string_view fields[] = {
    seq, pthread, creator_tid, creator_module, start_module, start_offset, create_t, creator_cpu_ns,
    attr_cpuset, cpuset, cpu, end_t, how, end_cpu, duration_ns};
}  // namespace thread_start

namespace thread_end {
inline constexpr char event[] = "thread_end";
inline constexpr char how[] = "how";
inline constexpr char seq[] = "seq";
inline constexpr char short_lived[] = "short_lived";
inline constexpr char cpuset[] = "cpuset";
inline constexpr char cpu[] = "cpu";
inline constexpr char utime_us[] = "utime_us";
inline constexpr char stime_us[] = "stime_us";
inline constexpr char nvcsw[] = "nvcsw";
inline constexpr char nivcsw[] = "nivcsw";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr char run_delay_ns[] = "run_delay_ns";
inline constexpr char run_slices[] = "run_slices";
inline constexpr std::string_view fields[] = {
    how, seq, short_lived, cpuset, cpu, utime_us, stime_us, nvcsw, nivcsw, duration_ns, run_delay_ns,
    run_slices};
}  // namespace thread_end

namespace thread_usage_at_exit {
inline constexpr char event[] = "thread_usage_at_exit";
inline constexpr char target_tid[] = "target_tid";
inline constexpr char cpu_us[] = "cpu_us";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr char run_delay_ns[] = "run_delay_ns";
inline constexpr char run_slices[] = "run_slices";
// A thread of the kernel's task list the recorder never saw created (glibc's
// own threads: SIGEV_THREAD timers and aio; a raw clone): true, with its name.
inline constexpr char untraced[] = "untraced";
inline constexpr char name[] = "name";
inline constexpr char cpuset[] = "cpuset";  // with untraced: its mask, read then
inline constexpr std::string_view fields[] = {target_tid, cpu_us, duration_ns, run_delay_ns, run_slices,
                                              untraced,   name,   cpuset};
}  // namespace thread_usage_at_exit

namespace join {
inline constexpr char event[] = "join";
inline constexpr char api[] = "api";
inline constexpr char target_pthread[] = "target_pthread";
inline constexpr char target_tid[] = "target_tid";
inline constexpr char begin_t[] = "begin_t";
inline constexpr char cpu_ns[] = "cpu_ns";
inline constexpr char rc[] = "rc";
inline constexpr std::string_view fields[] = {api, target_pthread, target_tid, begin_t, cpu_ns, rc};
}  // namespace join

namespace thread_create_failed {
inline constexpr char event[] = "thread_create_failed";
inline constexpr char error[] = "error";
inline constexpr std::string_view fields[] = {error};
}  // namespace thread_create_failed

namespace thread_name {
inline constexpr char event[] = "thread_name";
inline constexpr char target_tid[] = "target_tid";
inline constexpr char target_pthread[] = "target_pthread";
inline constexpr char name[] = "name";
inline constexpr std::string_view fields[] = {target_tid, target_pthread, name};
}  // namespace thread_name

namespace affinity {
inline constexpr char event[] = "affinity";
inline constexpr char api[] = "api";
inline constexpr char target_tid[] = "target_tid";
inline constexpr char target_pthread[] = "target_pthread";
inline constexpr char target_is_caller[] = "target_is_caller";
inline constexpr char target_in_process[] = "target_in_process";
inline constexpr char caller_module[] = "caller_module";
inline constexpr char callers[] = "callers";
inline constexpr char old_cpuset[] = "old_cpuset";
inline constexpr char requested_cpuset[] = "requested_cpuset";
inline constexpr char cpuset[] = "cpuset";
inline constexpr char rc[] = "rc";
inline constexpr char errno_[] = "errno";
inline constexpr std::string_view fields[] = {
    api, target_tid, target_pthread, target_is_caller, target_in_process, caller_module, callers, old_cpuset,
    requested_cpuset, cpuset, rc, errno_};
}  // namespace affinity

// mpi_init and mpi_finalize: the same snapshot of the process's threads.
namespace mpi_snapshot {
inline constexpr char api[] = "api";
inline constexpr char rc[] = "rc";
inline constexpr char rank[] = "rank";
inline constexpr char size[] = "size";
inline constexpr char thread_level[] = "thread_level";
inline constexpr char threads[] = "threads";  // an array of objects: thread
inline constexpr std::string_view fields[] = {api, rc, rank, size, thread_level, threads};
namespace thread {
inline constexpr char tid[] = "tid";
inline constexpr char name[] = "name";
inline constexpr char cpuset[] = "cpuset";
inline constexpr std::string_view fields[] = {tid, name, cpuset};
}  // namespace thread
}  // namespace mpi_snapshot

namespace mpi_init {
inline constexpr char event[] = "mpi_init";  // fields: mpi_snapshot
}  // namespace mpi_init

namespace mpi_finalize {
inline constexpr char event[] = "mpi_finalize";  // fields: mpi_snapshot
}  // namespace mpi_finalize

namespace signal {
inline constexpr char event[] = "signal";
inline constexpr char signal[] = "signal";  // the signal's number
inline constexpr char name[] = "name";  // "SIGSEGV", ...
inline constexpr char disposition[] = "disposition";
inline constexpr char fatal[] = "fatal";
inline constexpr char code[] = "code";
inline constexpr char addr[] = "addr";
inline constexpr char sender_pid[] = "sender_pid";
inline constexpr std::string_view fields[] = {signal, name, disposition, fatal, code, addr, sender_pid};
}  // namespace signal

namespace topology {
inline constexpr char event[] = "topology";
inline constexpr char file[] = "file";
inline constexpr char ok[] = "ok";
inline constexpr char error[] = "error";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr std::string_view fields[] = {file, ok, error, duration_ns};
}  // namespace topology

namespace model {
inline constexpr char event[] = "model";
inline constexpr char ok[] = "ok";
inline constexpr char error[] = "error";
inline constexpr char note[] = "note";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr std::string_view fields[] = {ok, error, note, duration_ns};
}  // namespace model

namespace sampling {
inline constexpr char event[] = "sampling";
inline constexpr char requested[] = "requested";
inline constexpr char started[] = "started";
inline constexpr char message[] = "message";
inline constexpr char error[] = "error";
inline constexpr std::string_view fields[] = {requested, started, message, error};
}  // namespace sampling

// The log stopped recording before the process ended: it could not grow
// (a full disk, a file-size limit) or be written. Written once, at the end,
// into room the log keeps for it, in place of the process_end that was lost.
namespace log_stopped {
inline constexpr char event[] = "log_stopped";
inline constexpr char errno_[] = "errno";
inline constexpr char error[] = "error";  // strerror's text
inline constexpr char how[] = "how";      // how the process ended, as process_end would have said
inline constexpr std::string_view fields[] = {errno_, error, how};
}  // namespace log_stopped

namespace samples {
inline constexpr char event[] = "samples";
inline constexpr char file[] = "file";
inline constexpr char ok[] = "ok";
inline constexpr char error[] = "error";
inline constexpr char duration_ns[] = "duration_ns";
inline constexpr std::string_view fields[] = {file, ok, error, duration_ns};
}  // namespace samples

// A warning the live watcher gave while the job ran (preload/live_watcher.hpp):
// the condition, since when it held (monotonic ns, as `t`), on which CPUs,
// how many busy threads and allowed CPUs, and the line it wrote to stderr.
namespace live_warning {
inline constexpr char event[] = "live_warning";
inline constexpr char condition[] = "condition";  // oversubscribed, idle_cores, cpu_throttled
inline constexpr char source[] = "source";        // watcher, mpi_init
inline constexpr char since[] = "since";
inline constexpr char cpus[] = "cpus";            // the CPUs concerned, "0-3,8"
inline constexpr char threads[] = "threads";      // busy threads (mpi_init: ranks x OMP_NUM_THREADS)
inline constexpr char allowed_cpus[] = "allowed_cpus";  // CPUs the job's masks allow on the node
inline constexpr char throttled_periods[] = "throttled_periods";
inline constexpr char what[] = "what";        // the condition in words, with its figures
inline constexpr char fix[] = "fix";
inline constexpr char message[] = "message";  // the whole line (what, since when, fix)
inline constexpr char said[] = "said";  // false: written to the log only (-q, STACKSAGE_QUIET)
inline constexpr std::string_view fields[] = {condition, source,  since, cpus, threads, allowed_cpus,
                                              throttled_periods, what, fix, message, said};
}  // namespace live_warning

// Every event of the schema, for dispatch in readers. `unknown` is an
// event the schema does not have (a newer recorder's): readers skip it.
enum class EventKind : std::uint8_t {
    process_start,
    process_end,
    fork,
    fork_failed,
    exec,
    exec_failed,
    thread_start,
    thread_end,
    thread_create_failed,
    thread_name,
    affinity,
    mpi_init,
    mpi_finalize,
    signal,
    topology,
    model,
    samples,
    sampling,
    thread_usage_at_exit,
    join,
    log_stopped,
    live_warning,
    unknown,
};

inline constexpr std::size_t kEventKinds = static_cast<std::size_t>(EventKind::unknown);

struct EventEntry {
    EventKind kind;
    std::string_view name;
    std::span<const std::string_view> fields;  // besides the common ones
};

// Every event, in the order of EventKind.
inline constexpr EventEntry kEvents[] = {
    {EventKind::process_start, process_start::event, process_start::fields},
    {EventKind::process_end, process_end::event, process_end::fields},
    {EventKind::fork, fork::event, fork::fields},
    {EventKind::fork_failed, fork_failed::event, fork_failed::fields},
    {EventKind::exec, exec::event, exec::fields},
    {EventKind::exec_failed, exec_failed::event, exec_failed::fields},
    {EventKind::thread_start, thread_start::event, thread_start::fields},
    {EventKind::thread_end, thread_end::event, thread_end::fields},
    {EventKind::thread_create_failed, thread_create_failed::event, thread_create_failed::fields},
    {EventKind::thread_name, thread_name::event, thread_name::fields},
    {EventKind::affinity, affinity::event, affinity::fields},
    {EventKind::mpi_init, mpi_init::event, mpi_snapshot::fields},
    {EventKind::mpi_finalize, mpi_finalize::event, mpi_snapshot::fields},
    {EventKind::signal, signal::event, signal::fields},
    {EventKind::topology, topology::event, topology::fields},
    {EventKind::model, model::event, model::fields},
    {EventKind::samples, samples::event, samples::fields},
    {EventKind::sampling, sampling::event, sampling::fields},
    {EventKind::thread_usage_at_exit, thread_usage_at_exit::event, thread_usage_at_exit::fields},
    {EventKind::join, join::event, join::fields},
    {EventKind::log_stopped, log_stopped::event, log_stopped::fields},
    {EventKind::live_warning, live_warning::event, live_warning::fields},
};

constexpr bool events_follow_their_kinds() {
    if (std::size(kEvents) != kEventKinds) return false;
    for (std::size_t i = 0; i < kEventKinds; ++i)
        if (static_cast<std::size_t>(kEvents[i].kind) != i) return false;
    return true;
}
static_assert(events_follow_their_kinds(), "kEvents lists every EventKind once, in order");

// \return the event's name; "" for EventKind::unknown.
constexpr std::string_view event_name(EventKind kind) {
    const auto i = static_cast<std::size_t>(kind);
    return i < kEventKinds ? kEvents[i].name : std::string_view();
}

// \return the kind of the event of that name; EventKind::unknown when the
//         schema has none of that name. A few comparisons of lengths, then of
//         bytes: as cheap as the chains of string compares it replaces.
constexpr EventKind event_kind(std::string_view name) {
    for (const EventEntry& e : kEvents)
        if (e.name == name) return e.kind;
    return EventKind::unknown;
}

}  // namespace stacksage::event_schema
