#include "preload/tracer.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <sys/utsname.h>
#include <time.h>

#include <cstdlib>
#include <cstring>

#include "preload/environment.hpp"
#include "preload/exec_environment.hpp"
#include "preload/live_watcher.hpp"
#include "preload/module_table.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/sampling_hook.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/text.hpp"
#include "preload/thread_launch.hpp"
#include "preload/thread_start_writer.hpp"

namespace stacksage::preload {

namespace {

constinit ProcessState g_process;
__attribute__((tls_model("initial-exec"))) thread_local ThreadState g_thread;
constinit SpinLock g_big_line_lock;
char g_big_line[kBigLineBytes];

// Where glibc keeps a thread's tid in its struct pthread (the address
// pthread_self() returns): 0 when unknown.
constinit std::atomic<int> g_tid_offset{0};
constinit std::atomic<bool> g_tid_offset_confirmed{false};

// How long a thread waits for another thread's initialisation before it
// gives up and lets its own call through untraced.
constexpr int kInitWaitYields = 200000;

bool env_flag(const char* name, bool fallback) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return fallback;
    return !(std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 ||
             std::strcmp(v, "off") == 0 || std::strcmp(v, "false") == 0);
}

// Host names become directory names: keep them to a safe alphabet.
void read_host_name(char* out, std::size_t cap) {
    struct utsname u{};
    const char* name = raw::uname(&u) == 0 ? u.nodename : "";
    std::size_t n = 0;
    for (; name[n] != '\0' && n + 1 < cap; ++n) {
        char c = name[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
        out[n] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0 || std::strcmp(out, ".") == 0 || std::strcmp(out, "..") == 0) {
        TextBuffer(out, cap).add("unknown-host");
    }
}

// OUT, absolute: the application may chdir() before a log must be found
// again by its name, before the model is written next to it, or before it
// execs an image that reads STACKSAGE_OUTPUT again.
void set_output_directory(ProcessState& p, const char* out) {
    TextBuffer dir(p.out_dir, sizeof p.out_dir);
    if (out[0] != '/') {
        char cwd[4096];
        const long n = raw::syscall6(SYS_getcwd, reinterpret_cast<long>(cwd), sizeof cwd);
        if (n > 0 && cwd[0] == '/') {
            dir.add(cwd);
            if (std::strcmp(cwd, "/") != 0) dir.add("/");
            TextBuffer(p.output_given, sizeof p.output_given).add(out);
        }
    }
    dir.add(out);
    if (p.output_given[0] != '\0')
        TextBuffer(p.output_entry, sizeof p.output_entry).add(kOutputEntryPrefix).add(p.out_dir);
}

// The base name of the file this library was loaded from.
void find_library_name(char* out, std::size_t cap) {
    Dl_info info{};
    const char* path = dladdr(reinterpret_cast<void*>(&find_library_name), &info) != 0 && info.dli_fname != nullptr
                           ? info.dli_fname
                           : "libstacksage-preload.so";
    const char* slash = std::strrchr(path, '/');
    TextBuffer(out, cap).add(slash != nullptr ? slash + 1 : path);
}

void initialise() {
    RecorderScope scope;
    // Before anything could be said: the only file notices go to.
    remember_stderr();
    ProcessState& p = g_process;
    find_tid_in_thread_descriptor();
    p.start_mono_ns = monotonic_ns();
    p.start_real_ns = realtime_ns();
    p.pid = raw::getpid();
    p.ppid = raw::getppid();
    arm_new_process_detector(p.pid);
    p.quiet = env_flag("STACKSAGE_QUIET", false);
    p.log.set_quiet(p.quiet);  // its own messages (full disk, removed) too

    const char* out = std::getenv("STACKSAGE_OUTPUT");
    if (out == nullptr || *out == '\0') {
        say("STACKSAGE_OUTPUT is not set (use `stacksage run`); this program runs untraced");
        p.state.store(static_cast<int>(TracerState::Disabled), std::memory_order_release);
        return;
    }
    set_output_directory(p, out);
    find_library_name(p.library_name, sizeof p.library_name);
    p.write_topology = env_flag("STACKSAGE_TOPOLOGY", true);
    p.write_model = env_flag("STACKSAGE_MODEL", true);

    read_host_name(p.host, sizeof p.host);
    long n = raw::readlinkat(AT_FDCWD, "/proc/self/exe", p.exe, sizeof p.exe - 1);
    p.exe[n > 0 ? n : 0] = '\0';
    long c = raw::read_small_file(AT_FDCWD, "/proc/self/cmdline", p.cmdline, sizeof p.cmdline);
    p.cmdline_len = c > 0 ? static_cast<std::size_t>(c) : 0;
    p.cmdline_truncated = p.cmdline_len + 1 >= sizeof p.cmdline;
    p.launcher = launcher_name(p.exe, p.cmdline_len > 0 ? p.cmdline : nullptr);
    p.rank = p.launcher ? -1 : rank_from_environment();

    char error[1024];
    if (!p.log.open(p.out_dir, p.host, p.rank, p.pid, error, sizeof error)) {
        char msg[1200];
        TextBuffer(msg, sizeof msg).add(error).add("; pid ").add_int(p.pid).add(
            " runs untraced");
        say(msg);
        p.state.store(static_cast<int>(TracerState::Disabled), std::memory_order_release);
        return;
    }
    write_process_start("exec", 0);
    p.state.store(static_cast<int>(TracerState::Ready), std::memory_order_release);

    register_exit_recorder();
    install_signal_recorder();
    if (p.write_topology) write_topology_once();
    start_sampling();  // STACKSAGE_SAMPLE; samples this thread from now on
    start_live_watcher();  // STACKSAGE_LIVE
}

}  // namespace

ProcessState& process() { return g_process; }
ThreadState& this_thread() { return g_thread; }
SpinLock& big_line_lock() { return g_big_line_lock; }
char* big_line_buffer() { return g_big_line; }

void SpinLock::lock() {
    int expected = 0;
    while (!flag_.compare_exchange_weak(expected, 1, std::memory_order_acquire)) {
        expected = 0;
        raw::syscall6(SYS_sched_yield);
    }
}

void find_tid_in_thread_descriptor() {
#if defined(__x86_64__) && defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
    constexpr int kOffset = 720;  // offsetof(struct pthread, tid), glibc 2.34 and later
    int value = 0;
    std::memcpy(&value, reinterpret_cast<const char*>(pthread_self()) + kOffset, sizeof value);
    if (value == raw::gettid()) g_tid_offset.store(kOffset, std::memory_order_relaxed);
#endif
}

int read_own_tid() {
    const int offset = g_tid_offset.load(std::memory_order_relaxed);
    if (offset == 0) return raw::gettid();
    int value = 0;
    std::memcpy(&value, reinterpret_cast<const char*>(pthread_self()) + offset, sizeof value);
    if (g_tid_offset_confirmed.load(std::memory_order_acquire)) return value;
    // The first thread after the one that found the offset: confirm it there
    // too (a thread whose tid differs from the pid rules out a look-alike).
    const int real = raw::gettid();
    if (real != value) g_tid_offset.store(0, std::memory_order_relaxed);
    else if (real != g_process.pid) g_tid_offset_confirmed.store(true, std::memory_order_release);
    return real;
}

// Not instrumented by ThreadSanitizer: the field is written by the kernel
// (clone, before pthread_create returned to the joiner, and at exit), which
// TSan cannot see; it models the new thread's TLS set-up as a write of the
// same bytes and reports a race with this read that no program order allows.
__attribute__((no_sanitize("thread"))) int tid_in_descriptor(pthread_t thread) {
    if (!g_tid_offset_confirmed.load(std::memory_order_acquire)) return -1;
    const int offset = g_tid_offset.load(std::memory_order_relaxed);
    if (offset == 0) return -1;
    // The kernel writes the field (clone, exit): read it as a whole int.
    return __atomic_load_n(reinterpret_cast<const int*>(reinterpret_cast<const char*>(thread) + offset),
                           __ATOMIC_RELAXED);
}

std::uint64_t monotonic_ns() {
    struct timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t realtime_ns() {
    struct timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

bool tracing_ready() {
    follow_unseen_child();
    if (g_thread.depth > 0) return false;
    int s = g_process.state.load(std::memory_order_acquire);
    if (s == static_cast<int>(TracerState::Ready)) return true;
    if (s == static_cast<int>(TracerState::Disabled)) return false;
    if (s == static_cast<int>(TracerState::Uninitialised)) {
        int expected = s;
        if (g_process.state.compare_exchange_strong(expected,
                                                    static_cast<int>(TracerState::Initialising))) {
            initialise();
            return g_process.state.load(std::memory_order_acquire) ==
                   static_cast<int>(TracerState::Ready);
        }
    }
    // Another thread is initialising: wait a while, never forever.
    for (int i = 0; i < kInitWaitYields; ++i) {
        s = g_process.state.load(std::memory_order_acquire);
        if (s == static_cast<int>(TracerState::Ready)) return true;
        if (s == static_cast<int>(TracerState::Disabled)) return false;
        raw::syscall6(SYS_sched_yield);
    }
    return false;
}

void begin_line() {
    follow_unseen_child();  // before the pid and tid are read
    write_pending_starts_first();
}

void begin_event(JsonLine& line, const char* event) {
    begin_line();
    begin_event_at(line, event, current_tid(), monotonic_ns());
}

void begin_event(JsonLine& line, const char* event, int tid) {
    begin_line();
    begin_event_at(line, event, tid, monotonic_ns());
}

void begin_event_at(JsonLine& line, const char* event, int tid, std::uint64_t t) {
    namespace common = event_schema::common;
    line.open_object();
    line.field(common::v, static_cast<std::int64_t>(kSchemaVersion));
    line.field(common::ev, event);
    line.field_u(common::t, t);
    line.field(common::pid, static_cast<std::int64_t>(g_process.pid));
    line.field(common::tid, static_cast<std::int64_t>(tid));
}

void emit(JsonLine& line, const char* event) {
    std::size_t n = line.finish();
    if (n != 0) {
        append_to_node_file(line.data(), n);
        return;
    }
    char small[256];
    JsonLine fallback(small, sizeof small);
    begin_event(fallback, event);
    fallback.field_bool(event_schema::common::truncated, true);
    n = fallback.finish();
    if (n != 0) append_to_node_file(small, n);
}

void say(const char* message) {
    if (g_process.quiet) return;
    char buf[1400];
    TextBuffer line(buf, sizeof buf);
    line.add("stacksage: ").add(message).add("\n");
    tell_stderr_once(line.c_str(), line.size());
}

void reinitialise_in_child(bool unseen_fork) {
    ProcessState& p = g_process;
    g_thread.tid = raw::gettid();
    g_thread.depth = 0;
    g_thread.traced = false;
    g_thread.launch = nullptr;  // its start, if pending, is the parent's to write
    // The parent is the process whose state this copy is: getppid() already
    // says 1 when the parent ended first (daemon(3) _exits at once).
    const int parent = p.pid;
    p.pid = raw::getpid();
    p.ppid = parent > 0 ? parent : raw::getppid();
    arm_new_process_detector(p.pid);
    p.start_mono_ns = monotonic_ns();
    p.start_real_ns = realtime_ns();
    p.ended.store(false, std::memory_order_relaxed);
    p.exit_recorded.store(false, std::memory_order_relaxed);
    // The child's own counts: its process_end says what it created.
    p.thread_seq.store(0, std::memory_order_relaxed);
    p.threads_untraced.store(0, std::memory_order_relaxed);
    p.affinity_calls.store(0, std::memory_order_relaxed);
    g_big_line_lock.reset();
    modules().reset_after_fork();
    forget_recorder_threads();  // the parent's drain thread is not copied into the child
    forget_pending_starts();    // nor are its threads
    forget_start_writer();
    // One function opens the new process's log: the parent's, inherited, is
    // never written here.
    if (!p.log.reopen_in_child(p.rank, p.pid)) {
        // Said once, never silently (descriptors exhausted, the output
        // directory removed or full). Async-signal-safe: raw write only.
        const long error = p.log.write_error();
        char msg[1200];
        TextBuffer(msg, sizeof msg)
            .add("cannot create an event log in '")
            .add(p.out_dir)
            .add("/")
            .add(p.host)
            .add("' (")
            .add(error < 0 ? strerrordesc_np(static_cast<int>(-error)) : "no output directory")
            .add("); pid ")
            .add_int(p.pid)
            .add(" (a child of fork) runs untraced");
        say(msg);
        p.state.store(static_cast<int>(TracerState::Disabled), std::memory_order_release);
        return;
    }
    write_process_start("fork", 0, unseen_fork);
    restart_sampling_in_child();
    live_watcher_after_fork();
}

void set_up_unseen_child() {
    // A handler that interrupted the switch would write into a log half set
    // up (or still the parent's).
    SignalsBlocked blocked;
    if (!claim_new_process()) {
        // Another thread of the child (one made by a raw clone) is setting
        // it up: wait for it, never for ever.
        for (int i = 0; i < kInitWaitYields && in_new_process(); ++i) raw::syscall6(SYS_sched_yield);
        return;
    }
    ProcessState& p = g_process;
    if (p.state.load(std::memory_order_acquire) != static_cast<int>(TracerState::Ready)) {
        // Nothing recorded in the parent: nothing to set up; the log, if
        // any, is still the parent's and is never written here.
        if (p.state.load(std::memory_order_acquire) == static_cast<int>(TracerState::Initialising))
            p.state.store(static_cast<int>(TracerState::Disabled), std::memory_order_release);
        arm_new_process_detector(raw::getpid());
        return;
    }
    // The parent's depth on this thread is not the child's business: the
    // child's process_start is written whatever the thread was doing.
    const int depth = g_thread.depth;
    reinitialise_in_child(/*unseen_fork=*/true);
    g_thread.depth = depth;
}

bool is_recorded_process() {
    follow_unseen_child();
    return raw::getpid() == g_process.pid;
}

}  // namespace stacksage::preload

// Runs before main (or finds the recorder already initialised by an earlier
// interposed call).
__attribute__((constructor(101))) static void stacksage_preload_constructor() {
    auto& p = stacksage::preload::process();
    if (p.state.load() == static_cast<int>(stacksage::preload::TracerState::Uninitialised))
        p.initialised_by = "constructor";
    stacksage::preload::tracing_ready();
}
