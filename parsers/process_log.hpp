// What one event log says about one process image: its identity, its
// threads, and every mask each thread had, with the times it changed.
//
// This is where the preload's events (docs/event-log.md) get their meaning:
// thread_start opens a thread with the mask it started with, affinity events
// change the target thread's mask, MPI snapshots correct masks changed behind
// our back and reveal threads we did not see created, thread_end and
// process_end close them: this is the one interpreter of the logs. The
// model is built from these records by process_model_builder.hpp, for the
// analyzer (run_loader.hpp, which merges the images of one process before
// and after exec) and for the recorder's model writer alike.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/cpuset.hpp"
#include "core/result.hpp"
#include "parsers/event_log_reader.hpp"
#include "parsers/live_warning.hpp"

namespace stacksage {

// CPU numbers from this one up are dropped from the masks of a log (and
// counted in ProcessImage::masks_clipped): a kernel numbers its CPUs below its
// NR_CPUS, 8192 at most in today's kernels, and a mask reaching far beyond
// (an edited log's "0-1000000") would make the node rebuilt from the masks,
// and every flow's MayRunOn paths, as large.
inline constexpr unsigned kMaxCpuInLog = 16384;

struct MaskChange {
    std::int64_t t = 0;
    Cpuset cpuset;
    // The event that set it (process_start, thread_start, affinity,
    // mpi_init, mpi_finalize, thread_end).
    event_schema::EventKind reason = event_schema::EventKind::unknown;
    // For an affinity event: the call ("pthread_setaffinity_np",
    // "sched_setaffinity", "syscall"), the thread that made it and the
    // module it was called from ("" when unknown; points into
    // ProcessImage::module_pool). A thread may set another's mask.
    std::string_view api;
    std::int64_t caller_tid = -1;
    std::string_view caller_module;
};

// A wait the recorder saw the thread make (docs/event-log.md, `join`): it
// was blocked from begin_t to end_t, and had used cpu_ns of CPU by then.
struct WaitRecord {
    std::int64_t begin_t = 0;
    std::int64_t end_t = 0;
    std::int64_t cpu_ns = -1;        // -1: unknown
    std::int64_t target_tid = -1;    // the thread waited for; -1: known only by its handle
    std::string target_pthread;      // its pthread handle (hex), "" when unknown
};

struct ThreadRecord {
    std::int64_t tid = 0;
    std::int64_t seq = -1;
    std::int64_t creator_tid = -1;
    std::string_view creator_module;  // "" when unknown; points into ProcessImage::module_pool
    std::string_view start_module;
    std::string name;
    std::int64_t start_t = -1;
    std::int64_t end_t = -1;      // -1: no end recorded (the process ended first, or was killed)
    std::string end_how;
    std::int64_t utime_us = -1;   // -1: unknown
    std::int64_t stime_us = -1;
    std::int64_t nvcsw = -1;      // voluntary context switches (it blocked); -1: unknown
    std::int64_t nivcsw = -1;     // involuntary ones (preempted while it could run)
    std::int64_t run_delay_ns = -1;  // time it could run but waited for a CPU; -1: not recorded
    std::int64_t run_slices = -1;    // times it was put on a CPU (schedstat); -1: not recorded
    // The CPU time was read at the process's exit (thread_usage_at_exit: the
    // thread was never joined): utime_us holds user + system time, stime_us
    // is 0, and the context switches are unknown.
    bool cpu_time_at_exit = false;
    // It ended within a millisecond of its start (thread_end said
    // "short_lived", or its thread_start carried its end), and the recorder
    // skipped its CPU time, context switches and end mask
    // (docs/event-log.md); its figures are bounded by that life.
    bool short_lived = false;
    std::optional<Cpuset> attr_cpuset;
    std::vector<MaskChange> masks;  // in time order; the first is the starting mask
    // The mask read again at its thread_end (a change made behind the
    // recorder's back shows here), when the end recorded one; not in masks.
    std::optional<MaskChange> end_mask;
    bool ended_itself = false;      // its own end was read (thread_end, or end_t of its thread_start): end_t is it
    // In the order recorded, as recorded: the run view (analysis/run_view.hpp)
    // orders them and clips them to the thread's life.
    std::vector<WaitRecord> waits;
    std::string pthread_handle;     // from thread_start (hex); "" for the main thread
    std::int64_t create_t = -1;       // when its creator called pthread_create; -1: unknown
    std::int64_t creator_cpu_ns = -1;  // the creator's CPU time then; -1: not read
    int first_cpu = -1;             // the CPU it was seen on at its start; -1: unknown
    int last_cpu = -1;              // the CPU it was last seen on (at its end); -1: unknown
    bool is_main = false;
    bool discovered = false;        // first seen in a snapshot, not created under our eyes
    // Found in the kernel's task list at the process's end, never seen
    // created (thread_usage_at_exit "untraced": glibc's own threads, raw clones).
    bool untraced = false;
};

// A reading of the CPU quota of the process's cgroups and the throttling
// counters of the cgroup holding it (process_start, process_end); -1: not
// recorded (no quota, or an older recorder).
struct CpuQuotaReading {
    std::int64_t quota_us = -1;
    std::int64_t period_us = -1;
    std::int64_t periods = -1;       // cpu.stat nr_periods
    std::int64_t throttled = -1;     // nr_throttled
    std::int64_t throttled_ns = -1;  // throttled time, ns

    bool has_quota() const { return quota_us > 0 && period_us > 0; }
};

struct ProcessImage {
    std::string file;               // the log's path (a node file's stream: "<host>/node.events#N")
    std::uint64_t stream = 0;       // its stream number in the node file; 0 for a log of its own
    std::string host;               // from process_start; "" when unknown
    std::int64_t pid = -1;
    std::int64_t ppid = -1;
    std::int64_t rank = -1;
    std::int64_t environment_rank = -1;  // the rank process_start gave (from the environment); -1: none
    std::string launcher;           // launcher name; "" for application processes
    std::string exe;
    std::vector<std::string> cmdline;
    std::string origin;             // "exec" or "fork"
    std::int64_t start_t = -1;
    std::int64_t end_t = -1;        // -1 until closed (see close_image)
    std::string end_how;            // "exit", "_exit", "signal SIGSEGV", "exec", "unknown"
    bool end_known = false;
    // The event that ended the image: process_end, signal (a fatal one:
    // end_signal is its number) or exec; unknown when none did.
    event_schema::EventKind end_event = event_schema::EventKind::unknown;
    std::int64_t end_signal = -1;
    std::optional<std::int64_t> exit_status;
    std::int64_t utime_us = -1;     // whole process (all threads), from process_end
    std::int64_t stime_us = -1;
    std::int64_t nvcsw = -1;        // context switches, likewise
    std::int64_t nivcsw = -1;
    std::int64_t main_run_delay_ns = -1;  // the main thread's wait for a CPU, from process_end
    std::int64_t main_run_slices = -1;    // and its count of time slices
    std::int64_t main_cpu_us = -1;  // the main thread's own CPU time, from process_end; -1: not recorded
    std::int64_t exec_t = -1;       // time of a successful-looking exec (the image ended there)
    std::int64_t last_event_t = -1;
    std::optional<Cpuset> cgroup_cpuset;
    std::optional<Cpuset> online_cpus;
    CpuQuotaReading quota_at_start;  // from process_start
    CpuQuotaReading quota_at_end;    // from process_end (also the one a fatal signal's path writes)
    std::string cpu_quota_cgroup;    // the cgroup holding the quota, from process_start; "" when none
    std::vector<std::pair<std::string, std::string>> env;       // binding variables
    std::vector<std::pair<std::string, std::string>> identity;  // rank/job variables
    std::int64_t mpi_rank = -1;     // rank in MPI_COMM_WORLD, from the last MPI snapshot that had it
    std::int64_t mpi_size = -1;     // from mpi_init
    std::int64_t mpi_thread_level = -1;
    std::int64_t mpi_init_t = -1;
    std::int64_t mpi_finalize_t = -1;
    std::vector<LiveWarning> live_warnings;  // the live watcher's, in log order
    std::uint64_t threads_untraced = 0;  // creations the recorder could not follow
    std::int64_t recorder_cpu_us = -1;   // the recorder's own threads' CPU time, from process_end; -1: not recorded
    // Why the log ends before the image's end was recorded (no process_end,
    // fatal signal or exec): "killed" (the file still ends in the zero-filled
    // tail of the recorder's mapping, which every end it sees truncates, or,
    // in a node file, the stream's end was never recorded: a SIGKILL, the
    // OOM killer), "log-stopped" (a log_stopped event: the log
    // could not grow or be written; log_stop_error says why), "unknown" (an
    // older recorder, or a log written without its mapping); "" when the end
    // was recorded.
    std::string log_ends_early;
    std::string log_stop_error;
    std::vector<ThreadRecord> threads;   // the main thread first
    // Module paths, each stored once per image (a process's threads come
    // from a handful of modules). Shared, so that copies of the image (a
    // vector may copy rather than move it) keep the strings the threads point
    // to alive; a deque, so that adding a path never moves the others.
    std::shared_ptr<std::deque<std::string>> module_pool = std::make_shared<std::deque<std::string>>();
    // What in this log only an altered file (or a lost line) explains, and
    // what was done about it (run_loader.cpp notes each as a warning):
    std::size_t masks_unreadable = 0;    // cpuset fields that are no cpuset: ignored
    std::size_t masks_clipped = 0;       // masks naming CPUs >= kMaxCpuInLog: those CPUs dropped
    std::int64_t highest_clipped_cpu = -1;
    std::size_t duplicate_tid_starts = 0;          // a thread_start for a running thread's tid: that one ended there
    std::size_t duplicate_tid_starts_ignored = 0;  // one for the main thread's tid, or dated before the other: ignored
    std::size_t invalid_tids = 0;        // tids <= 0 in an MPI snapshot's thread list: ignored
    // Threads whose mask at their end is not the last one recorded: changed
    // behind the intercepted calls (ThreadRecord::end_mask); the first, told.
    std::size_t masks_changed_unseen = 0;
    std::string mask_changed_unseen_example;
    std::vector<std::string> notes;      // what in this log was odd but not fatal
    EventLogSummary summary;
};

// Whether a thread that the log only saw in a snapshot is one of the
// recorder's own (preload/recorder_threads.hpp names them "stacksage-..."):
// recorders before it kept them out of snapshots listed their drain thread
// there, and it must never count as the application's.
bool is_recorder_thread_name(std::string_view name);

// Reads and interprets one event log.
//
// \return the image, closed: every thread has an end time (its own, or the
//         image's end: process_end, a fatal signal, exec, or the last event
//         seen, in that order of preference); the recorder's own threads are
//         left out.
// \return an Error naming the file when it cannot be read, is corrupt, or
//         does not start with a process_start event.
Result<ProcessImage> read_process_log(const std::string& path);
// `stream_ended`: for a stream of a node file, whether its end was recorded
// in the file (NodeStream::ended; false: its process was killed, whatever
// its text ends with); nullopt for a log of the per-process layout, judged
// by its zero-filled tail alone.
Result<ProcessImage> parse_process_log(std::string_view text, const std::string& name,
                                       std::optional<bool> stream_ended = std::nullopt);

}  // namespace stacksage
