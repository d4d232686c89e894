// The recorder's process-wide and per-thread state, its one-time
// initialisation, and the helpers every interposer uses to write an event.
//
// Initialisation happens in our constructor, or earlier, lazily, from the
// first interposed call (another library's constructor may create threads
// before ours runs). A reentrancy depth per thread makes every interposer
// pass straight through while the recorder itself is running (hwloc calling
// sched_setaffinity during topology discovery, for instance).
#pragma once

#include <pthread.h>
#include <sys/time.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/event_log.hpp"
#include "preload/json_line.hpp"
#include "preload/new_process_detector.hpp"
#include "core/formats/event_schema.hpp"
#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

// Version of the event-log schema (docs/event-log.md); in every line as "v".
inline constexpr int kSchemaVersion = event_schema::kVersion;

enum class TracerState : int { Uninitialised, Initialising, Ready, Disabled };

struct ProcessState {
    std::atomic<int> state{static_cast<int>(TracerState::Uninitialised)};
    int pid = 0;
    int ppid = 0;
    long rank = -1;
    const char* launcher = nullptr;  // launcher name, nullptr for application processes
    std::uint64_t start_mono_ns = 0;
    std::uint64_t start_real_ns = 0;
    bool write_topology = true;
    bool write_model = true;
    bool quiet = false;
    char out_dir[4096] = {};  // absolute (made so at the start when given relative)
    // When STACKSAGE_OUTPUT was given relative: its value as given, and the
    // entry an exec passes on instead ("STACKSAGE_OUTPUT=<out_dir>"), so
    // that an image started after a chdir() writes where this one does.
    char output_given[4096] = {};
    char output_entry[4096 + 32] = {};
    // The recorder's file name (libstacksage-preload.so): what an exec's
    // LD_PRELOAD must name for the next image to be recorded.
    char library_name[256] = {};
    char host[256] = {};
    char exe[4096] = {};
    char cmdline[32768] = {};  // NUL-separated, as in /proc/self/cmdline
    std::size_t cmdline_len = 0;
    bool cmdline_truncated = false;
    EventLog log;
    std::atomic<std::uint32_t> thread_seq{0};
    std::atomic<std::uint64_t> threads_untraced{0};  // creations we could not follow
    std::atomic<std::uint64_t> affinity_calls{0};    // affinity changes recorded
    std::atomic<bool> ended{false};                  // process_end written
    std::atomic<bool> exit_recorded{false};          // the exit recorder ran
    // "constructor", or "first_call" when an interposed call from another
    // library's constructor came first.
    const char* initialised_by = "first_call";
};
ProcessState& process();

struct ThreadState {
    int tid = 0;        // cached gettid(); reset in a forked child
    int depth = 0;      // > 0 while the recorder runs on this thread
    bool traced = false;   // started through our trampoline
    bool ended = false;    // thread_end written
    bool exiting = false;  // inside pthread_exit
    std::uint32_t seq = 0;
    std::uint64_t start_ns = 0;
    std::uint64_t last_cpu_reading_ns = 0;  // when pthread_create last read this thread's CPU time
    // Its launch slot while its start line may not be written yet
    // (thread_launch.hpp); nullptr once its end has seen to it.
    struct Launch* launch = nullptr;
    std::uint64_t launch_use = 0;  // which use of that slot is this thread's
};
ThreadState& this_thread();

// The calling thread's tid, read from glibc's thread descriptor where its
// layout was confirmed at start-up (and once more in the first new thread),
// with gettid() otherwise: a system call less on every thread's start.
int read_own_tid();
void find_tid_in_thread_descriptor();
// Another thread's tid from its descriptor, once the layout is confirmed:
// 0 once it has ended (the kernel clears the field at exit), -1 when the
// layout is not known. `thread` must be a handle the caller may use (one it
// is about to join), as glibc itself reads the same descriptor.
int tid_in_descriptor(pthread_t thread);

inline int current_tid() {
    ThreadState& t = this_thread();
    if (t.tid == 0) t.tid = raw::gettid();
    return t.tid;
}

// True when events may be written: initialises on first use. False (and the
// application runs untraced) when there is no usable output directory, while
// the recorder itself is running on this thread, or after fork/exec
// confusion (a vfork child sharing our memory).
bool tracing_ready();

inline bool inside_recorder() { return this_thread().depth > 0; }

// Blocks every signal on this thread for the lifetime of the object: around
// a fork and the child's switch to its own log, where a handler would write
// into a log half set up (or still the parent's). Two system calls.
class SignalsBlocked {
public:
    SignalsBlocked() {
        const unsigned long all = ~0ul;
        raw::syscall6(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, reinterpret_cast<long>(&all),
                      reinterpret_cast<long>(&saved_), sizeof saved_);
    }
    ~SignalsBlocked() {
        raw::syscall6(SYS_rt_sigprocmask, 2 /* SIG_SETMASK */, reinterpret_cast<long>(&saved_), 0, sizeof saved_);
    }
    SignalsBlocked(const SignalsBlocked&) = delete;
    SignalsBlocked& operator=(const SignalsBlocked&) = delete;

private:
    unsigned long saved_ = 0;
};

// Marks this thread as running recorder code for the lifetime of the object.
class RecorderScope {
public:
    RecorderScope() { ++this_thread().depth; }
    ~RecorderScope() { --this_thread().depth; }
    RecorderScope(const RecorderScope&) = delete;
    RecorderScope& operator=(const RecorderScope&) = delete;
};

std::uint64_t monotonic_ns();
std::uint64_t realtime_ns();
// A getrusage time (ru_utime, ru_stime) in microseconds.
inline std::int64_t microseconds(const struct timeval& tv) {
    return static_cast<std::int64_t>(tv.tv_sec) * 1'000'000 + tv.tv_usec;
}

// What every line but a thread's own start and end does first: sets up a
// child of an unseen fork (before the pid and tid are read) and writes the
// pending thread starts (thread_launch.hpp), which the line may name.
void begin_line();

// Opens the line's object and writes the fields every event has
// (event_schema::common). event: the event's name, one of event_schema's.
void begin_event(JsonLine& line, const char* event);
// The same, for an event whose writer's tid was read from the kernel: a
// thread made by a raw clone(CLONE_VM|CLONE_THREAD) shares its creator's
// thread-local state, and with it the tid current_tid() caches.
void begin_event(JsonLine& line, const char* event, int tid);
// The same, at time t (a thread's start written after it), without writing
// the pending thread starts first: for a thread's own start and end lines
// (thread_launch.hpp).
void begin_event_at(JsonLine& line, const char* event, int tid, std::uint64_t t);
// Finishes and writes the line; an overflowed line is replaced by a short
// one with "truncated": true so the event is still counted.
void emit(JsonLine& line, const char* event);

// "stacksage: <message>" on stderr (unless STACKSAGE_QUIET is set), when it
// is this process's first: one line at most (preload/stderr_notice.hpp).
void say(const char* message);

// The process_start line (also used by a forked child), written to the log.
// unseen_fork: a child of a fork the interposers did not see (below).
void write_process_start(const char* origin, int image, bool unseen_fork = false);
// In the child of fork(): new identity, new log, locks reset.
// \param unseen_fork the fork was not made through our fork() (_Fork(),
//        syscall(SYS_fork), clone() without CLONE_VM, glibc's own forks):
//        the child is found at its first event (follow_unseen_child).
void reinitialise_in_child(bool unseen_fork = false);

// Sets the recorder up in a child of a fork it did not see, at most once.
void set_up_unseen_child();
// Before anything is written: in such a child, its own log first, so that
// it never writes into its parent's (new_process_detector.hpp). One memory
// load when there is nothing to do.
inline void follow_unseen_child() {
    if (in_new_process()) [[unlikely]]
        set_up_unseen_child();
}
// Whether the caller runs in the process the recorder's state belongs to
// (false in a vfork child, which shares our memory); a child of an unseen
// fork is set up first. One getpid() system call.
bool is_recorded_process();

// Called once the recorder is ready: pieces that live in their own files.
void install_signal_recorder();
void register_exit_recorder();
void write_topology_once();

// Size of the static buffer big events (process_start, thread snapshots) use.
inline constexpr std::size_t kBigLineBytes = 64 * 1024;

// A spin lock that a forked child can reset and a signal handler never takes.
class SpinLock {
public:
    void lock();
    void unlock() { flag_.store(0, std::memory_order_release); }
    void reset() { flag_.store(0, std::memory_order_relaxed); }

private:
    std::atomic<int> flag_{0};
};
// Guards the big-line buffer.
SpinLock& big_line_lock();
char* big_line_buffer();

// Appends one complete event line (JSON ending in '\n', built with
// begin_event/JsonLine) to this process image's stream of the node's event
// file, OUT/<host>/node.events: what a recorder thread of its own (a
// watcher) uses to put an event into the node's file. Lock-free; false when
// the process is not recording (no file, a full disk, after a failure).
inline bool append_to_node_file(const char* line, std::size_t len) {
    ProcessState& p = process();
    return p.log.is_open() && p.log.write(line, len);
}

// Writes one event whose fields `fill(line)` adds, as thread `tid` at time t,
// without writing the pending thread starts first (begin_event_at). The line
// is built in a small stack buffer (threads being created have their stacks
// paged in on demand: every page we touch is a page fault) and rebuilt in the
// shared big buffer only when it does not fit; where that buffer's lock must
// not be taken (may_lock false: a signal handler may be the caller), a line
// that does not fit is not written and false is returned.
template <class Fill>
bool write_event_as(const char* event, int tid, std::uint64_t t, bool may_lock, Fill&& fill) {
    char small[768];
    JsonLine line(small, sizeof small);
    begin_event_at(line, event, tid, t);
    fill(line);
    if (std::size_t n = line.finish(); n != 0) {
        process().log.write(small, n);
        return true;
    }
    if (!may_lock) return false;
    big_line_lock().lock();
    JsonLine big(big_line_buffer(), kBigLineBytes);
    begin_event_at(big, event, tid, t);
    fill(big);
    emit(big, event);
    big_line_lock().unlock();
    return true;
}

// Writes one event of the calling thread whose fields `fill(line)` adds (the
// pending thread starts first, as begin_event). Not for signal handlers: the
// big buffer is behind a lock.
template <class Fill>
void write_event(const char* event, Fill&& fill) {
    begin_line();
    write_event_as(event, current_tid(), monotonic_ns(), /*may_lock=*/true, fill);
}

}  // namespace stacksage::preload
