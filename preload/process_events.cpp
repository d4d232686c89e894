// Process lifecycle: start (with the inherited placement), exit, _exit,
// fork and exec.
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstring>

#include "core/formats/launcher_environment.hpp"
#include "preload/cgroup_cpu_quota.hpp"
#include "preload/cgroup_cpuset.hpp"
#include "preload/environment.hpp"
#include "preload/exec_environment.hpp"
#include "preload/text.hpp"
#include "preload/real_functions.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/run_delay.hpp"
#include "preload/thread_cpu_clock.hpp"
#include "preload/thread_launch.hpp"
#include "preload/tracer.hpp"
#include "preload/untraced_tasks.hpp"

extern char** environ;

namespace stacksage::preload {

// Writes the model (or, with a reason not to, a "model" event saying why not).
void write_process_model_at_exit(const char* skip_reason);  // process_model_hook.cpp
bool in_application_signal_handler();  // signal_events.cpp
void finish_sampling_at_exit();      // sampling_hook.cpp
// Returns when the youngest live thread other than the caller started (0: none).
std::uint64_t write_usage_of_live_threads();  // thread_events.cpp

namespace {

// An object `key` of the environment variables that `wanted` accepts (names
// longer than 255 bytes are skipped: none of the allowlisted ones is).
void add_variables(JsonLine& line, const char* key, bool (*wanted)(const char* name, std::size_t len)) {
    line.key(key);
    line.open_object();
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (eq == nullptr) continue;
        std::size_t name_len = static_cast<std::size_t>(eq - *e);
        if (!wanted(*e, name_len)) continue;
        if (std::strlen(eq + 1) > formats::kMaxIdentityValueBytes) continue;
        char name[256];
        if (name_len >= sizeof name) continue;
        std::memcpy(name, *e, name_len);
        name[name_len] = '\0';
        line.key(name);
        line.str(eq + 1);
    }
    line.close_object();
}

void add_environment(JsonLine& line) {
    add_variables(line, event_schema::process_start::env, is_binding_variable);
    add_variables(line, event_schema::process_start::identity, is_identity_variable);
}

void add_rusage(JsonLine& line, const struct rusage& ru) {
    namespace end = event_schema::process_end;
    line.field(end::utime_us, microseconds(ru.ru_utime));
    line.field(end::stime_us, microseconds(ru.ru_stime));
    line.field(end::nvcsw, static_cast<std::int64_t>(ru.ru_nvcsw));
    line.field(end::nivcsw, static_cast<std::int64_t>(ru.ru_nivcsw));
    line.field(end::minflt, static_cast<std::int64_t>(ru.ru_minflt));
    line.field(end::majflt, static_cast<std::int64_t>(ru.ru_majflt));
}

// The quota found at the process's start (inherited by a fork child, which
// stays in its parent's cgroup): its end re-reads only that cgroup's files.
CgroupCpuQuota g_quota_at_start;

// The cgroups' CPU quota and throttling counters (process_start and
// process_end name them alike); nothing when no cgroup sets a quota.
// \param at_start walk the cgroups (at the start); else re-read the cgroup
//        the start found, or walk when it found none.
void add_cpu_quota(JsonLine& line, bool at_start) {
    namespace start = event_schema::process_start;
    // No quota at the start: none is looked for at the end (a quota set
    // while the job runs is rare, and the walk would cost every process).
    if (!at_start && !g_quota_at_start.has_quota()) return;
    CgroupCpuQuota quota = g_quota_at_start;
    const bool found = at_start ? read_cgroup_cpu_quota(quota) : reread_cgroup_cpu_quota(quota);
    if (at_start) g_quota_at_start = quota;
    if (!found) return;
    const bool with_cgroup = at_start;
    line.field(start::cpu_quota_us, quota.quota_us);
    line.field(start::cpu_period_us, quota.period_us);
    if (with_cgroup) line.field(start::cpu_quota_cgroup, quota.cgroup);
    if (quota.periods >= 0) line.field(start::cpu_periods, quota.periods);
    if (quota.throttled >= 0) line.field(start::cpu_throttled, quota.throttled);
    if (quota.throttled_ns >= 0) line.field(start::cpu_throttled_ns, quota.throttled_ns);
}
static_assert(std::string_view(event_schema::process_start::cpu_periods) == event_schema::process_end::cpu_periods);
static_assert(std::string_view(event_schema::process_start::cpu_throttled_ns) ==
              event_schema::process_end::cpu_throttled_ns);

// Whether this thread runs on its alternate signal stack (which may be as
// small as MINSIGSTKSZ): the cgroup reader's buffers (some 8 KiB) are then
// left out of a handler's work.
bool on_alternate_signal_stack() {
    stack_t current{};
    return raw::syscall6(SYS_sigaltstack, 0, reinterpret_cast<long>(&current)) == 0 &&
           (current.ss_flags & SS_ONSTACK) != 0;
}

// The log stopped recording before this end (a full disk, a file-size
// limit): process_end was lost with the rest, so the log says it ended
// early, and why, in the room it kept for that (EventLog::write_stop_note).
void write_log_stopped(const char* how) {
    namespace stopped = event_schema::log_stopped;
    const long error = -process().log.write_error();
    char buf[EventLog::kStopNoteRoom];
    JsonLine line(buf, sizeof buf);
    begin_event(line, stopped::event);
    line.field(stopped::errno_, static_cast<std::int64_t>(error));
    const char* text = error > 0 ? strerrordesc_np(static_cast<int>(error)) : nullptr;
    line.field(stopped::error, text != nullptr ? text : "unknown error");
    line.field(stopped::how, how);
    if (const std::size_t n = line.finish(); n != 0) process().log.write_stop_note(buf, n);
}

// When the youngest thread still alive at the process's end started (0: none).
std::uint64_t g_youngest_live_thread_at_end_ns = 0;

// \param interrupted_recorder the caller is a signal handler that interrupted
//        the recorder on this thread (_exit from a handler): only what is
//        async-signal-safe whatever the recorder was doing is written; the
//        walk over the live threads is left out (the registry may be half
//        updated), and the line says so.
// \param signal a fatal signal about to end the process by its default
//        action (how is "signal"); 0 otherwise.
void write_process_end(const char* how, int status, bool interrupted_recorder = false, int signal = 0) {
    ProcessState& p = process();
    if (p.ended.exchange(true)) return;
    RecorderScope scope;
    // The process ends: lines of threads still being created meanwhile are
    // left out of the log, which ends here (event_log.hpp).
    p.log.seal_for_end();
    // Threads that are never joined (a GNU OpenMP pool, detached helpers)
    // write no thread_end: their CPU time is read here, before the process's.
    if (!interrupted_recorder) g_youngest_live_thread_at_end_ns = write_usage_of_live_threads();
    // Threads glibc or a raw clone made behind the recorder's back, from the
    // kernel's task list (untraced_tasks.hpp); the recorder's own CPU time.
    const std::int64_t recorder_cpu_us = interrupted_recorder ? -1 : write_usage_of_untraced_tasks();
    namespace end = event_schema::process_end;
    char buf[1024];
    JsonLine line(buf, sizeof buf);
    begin_event(line, end::event);
    line.field(end::how, how);
    if (signal > 0)
        line.field(end::signal, static_cast<std::int64_t>(signal));
    else
        line.field(end::status, static_cast<std::int64_t>(status));
    struct rusage ru{};
    if (raw::getrusage(RUSAGE_SELF, &ru) == 0) {
        add_rusage(line, ru);
        line.field(end::maxrss_kb, static_cast<std::int64_t>(ru.ru_maxrss));
    }
    // The main thread's own CPU time: deriving it from the process's total
    // less the other threads' fails when one of them has no figure (a thread
    // only seen in a snapshot). Its tid is the pid; -1 once it is gone.
    const int own_tid = raw::gettid();
    if (const std::int64_t cpu_ns = read_thread_cpu_ns(own_tid == p.pid ? 0 : p.pid); cpu_ns >= 0)
        line.field(end::main_cpu_us, cpu_ns / 1000);
    // The main thread's wait for a CPU: a wait has no process-wide total to derive from.
    if (const SchedWait waited = read_sched_wait(p.pid); waited.run_delay_ns >= 0) {
        line.field(end::main_run_delay_ns, waited.run_delay_ns);
        line.field(end::main_run_slices, waited.slices);
    }
    line.field_u(end::threads_created, p.thread_seq.load(std::memory_order_relaxed));
    line.field_u(end::threads_untraced, p.threads_untraced.load(std::memory_order_relaxed));
    line.field_u(end::duration_ns, monotonic_ns() - p.start_mono_ns);
    if (interrupted_recorder) line.field_bool(end::interrupted_recorder, true);
    if (recorder_cpu_us >= 0) line.field(end::recorder_cpu_us, recorder_cpu_us);
    // The throttling counters at the end (the cgroup's path is in
    // process_start). In a signal handler only on a stack known to be large:
    // the main thread's own, not an alternate one.
    if (signal == 0 || (raw::gettid() == p.pid && !on_alternate_signal_stack())) add_cpu_quota(line, false);
    emit(line, end::event);
    close_pending_starts();  // the model's line, still to come, must not bring a start after the end
    if (!p.log.still_recording()) write_log_stopped(how);
}

// Why the model is not written at a normal exit, or nullptr. When the
// application calls exit() while its threads are still being created (a
// thread started less than kBusyExitWindowNs before the end is alive, or
// another thread wrote an event after process_end), those threads would go
// on running for as long as the writer takes (milliseconds, far more on a
// busy machine): the process ends without it, as it would without the
// recorder; the analyzer reads the log.
constexpr std::uint64_t kBusyExitWindowNs = 2'000'000;

const char* model_skip_reason_at_exit() {
    const std::uint64_t youngest = g_youngest_live_thread_at_end_ns;
    const bool young_thread = youngest != 0 && youngest + kBusyExitWindowNs > monotonic_ns();
    if (!young_thread && process().log.lines_after_end() == 0) return nullptr;
    return "threads were still being created when exit() was called: not written, so that the process ends as "
           "it would without the recorder";
}

// on_exit handlers get the status, also for a return from main (libc calls
// exit with main's result). It must run before the dynamic linker's exit
// handler (_dl_fini), which finalises every library: the model writer is
// dlopen'ed here and needs libc and libstdc++ as they were (after _dl_fini a
// dlopen initialises them a second time, which ASan's runtime refuses).
// Handlers run in reverse order of registration and _dl_fini is registered
// by __libc_start_main, after the preload's constructor: so the handler is
// registered again at the start of main (below), where it runs after the
// application's own atexit handlers and before _dl_fini. The constructor's
// registration stays for programs whose main is not reached through
// __libc_start_main; whichever runs first does the work.
void on_process_exit(int status, void*) {
    if (!is_recorded_process()) return;
    if (process().state.load() != static_cast<int>(TracerState::Ready)) return;
    if (process().exit_recorded.exchange(true)) return;
    finish_sampling_at_exit();
    write_process_end("exit", status);
    // The model is built from the log: not when the log no longer records
    // (its file removed, which is said here, or a full disk), and not inside
    // a signal handler that called exit(): loading the writer there (dlopen,
    // malloc) could deadlock on a lock the interrupted code holds, where the
    // application alone would have exited.
    if (process().log.still_recording())
        write_process_model_at_exit(in_application_signal_handler()
                                        ? "exit() was called from a signal handler: not written there"
                                        : model_skip_reason_at_exit());
    process().log.finish();  // the file keeps only the bytes written
}

// Only in the image that owns our state: a vfork child shares our memory and
// must not write into its parent's log under the parent's pid. A child of a
// fork we did not see gets its own log first.
bool is_our_process() { return is_recorded_process(); }

// exec (argv given) or exec_failed (error given): both name the path.
// untraced: why the next image will not be recorded (exec only), or nullptr.
void write_exec_event(const char* event, const char* path, char* const argv[], int error,
                      const char* untraced = nullptr) {
    namespace exec = event_schema::exec;
    static_assert(std::string_view(exec::path) == event_schema::exec_failed::path);
    char buf[4096];
    JsonLine line(buf, sizeof buf);
    begin_event(line, event);
    line.field(exec::path, path);
    if (argv != nullptr) {
        line.key(exec::argv);
        line.open_array();
        // Bounded: the event must fit one line; the count says what was left out.
        int n = 0;
        for (; argv[n] != nullptr; ++n) {
            if (n >= 32) continue;
            const char* a = argv[n];
            std::size_t len = std::strlen(a);
            line.str(a, len > 200 ? 200 : len);
        }
        line.close_array();
        line.field(exec::argc, static_cast<std::int64_t>(n));
    }
    if (untraced != nullptr) line.field(exec::untraced, untraced);
    if (error != 0) line.field(event_schema::exec_failed::errno_, static_cast<std::int64_t>(error));
    emit(line, event);
}

// The most environment entries an exec's environment may have for its
// STACKSAGE_OUTPUT to be made absolute (on the stack: 16 KiB).
constexpr std::size_t kMaxRewrittenEnvironment = 2048;

// The rewriting half of call_with_absolute_output, in a frame of its own:
// an exec in a vfork child may run on a small stack, which only a process
// given a relative output pays for.
template <class Call>
__attribute__((noinline)) int call_with_rewritten_output(char* const envp[], Call& call) {
    const ProcessState& p = process();
    char* storage[kMaxRewrittenEnvironment];
    char* entry = const_cast<char*>(p.output_entry);
    return call(with_absolute_output(envp, p.output_given, entry, storage, kMaxRewrittenEnvironment));
}

// Calls call(env): env is envp with STACKSAGE_OUTPUT made absolute when the
// process was given it relative (exec_environment.hpp), else nullptr (the
// interposer then passes on what it was given).
template <class Call>
int call_with_absolute_output(char* const envp[], Call&& call) {
    if (process().output_given[0] == '\0') return call(nullptr);
    return call_with_rewritten_output(envp, call);
}

// Every way of exec'ing: the exec event (and, if the call returns,
// exec_failed). envp is the environment the next image gets (environ for
// the calls without one); call(env) execs with env, or with what it was
// given when env is nullptr.
template <class Call>
int traced_exec(const char* path, char* const argv[], char* const envp[], Call&& call) {
    if (!tracing_ready()) return call(nullptr);
    // A vfork child (posix_spawn, system) writes no event but passes
    // STACKSAGE_OUTPUT on as absolute too.
    if (!is_our_process()) return call_with_absolute_output(envp, call);
    {
        RecorderScope scope;
        write_exec_event(event_schema::exec::event, path, argv, 0,
                         why_exec_runs_untraced(envp, process().library_name));
        // The new image opens its own log; this one keeps only the bytes
        // written (should exec fail, later lines go through pwrite).
        process().log.finish();
    }
    int rc = call_with_absolute_output(envp, call);
    int saved = errno;
    {
        RecorderScope scope;
        write_exec_event(event_schema::exec_failed::event, path, nullptr, saved);
    }
    errno = saved;
    return rc;
}

// The file a descriptor refers to, for the exec event of fexecve and
// execveat ("fd 7" when /proc cannot say), then "/" and `name` when given.
const char* describe_exec_file(char* out, std::size_t cap, int fd, const char* name) {
    TextBuffer text(out, cap);
    if (name != nullptr && name[0] == '/') return text.add(name).c_str();
    char link[64];
    TextBuffer(link, sizeof link).add("/proc/self/fd/").add_int(fd);
    char target[4096];
    const long n = fd == AT_FDCWD ? -1 : raw::readlinkat(AT_FDCWD, link, target, sizeof target - 1);
    if (fd == AT_FDCWD) {
        const long c = raw::syscall6(SYS_getcwd, reinterpret_cast<long>(target), sizeof target);
        text.add(c > 0 ? target : ".");
    } else if (n > 0) {
        target[n] = '\0';
        text.add(target);
    } else {
        text.add("fd ").add_int(fd);
    }
    if (name != nullptr && name[0] != '\0') text.add("/").add(name);
    return text.c_str();
}

// execl and friends: their argument lists, gathered into an array.
constexpr int kMaxExeclArgs = 1024;

}  // namespace

// A signal whose default action is about to end the process
// (signal_events.cpp): the process's end, as far as a handler may gather it:
// every live thread's CPU time, the process's usage, the main thread's CPU
// time and wait, the quota's counters. No sampler drain, no model (loading
// the writer could deadlock on a lock the interrupted code holds).
void write_process_end_at_fatal_signal(int signal) {
    if (process().state.load(std::memory_order_acquire) != static_cast<int>(TracerState::Ready)) return;
    if (!is_our_process()) return;
    write_process_end("signal", 0, /*interrupted_recorder=*/inside_recorder(), signal);
}

void write_process_start(const char* origin, int image, bool unseen_fork) {
    namespace start = event_schema::process_start;
    ProcessState& p = process();
    big_line_lock().lock();
    JsonLine line(big_line_buffer(), kBigLineBytes);
    begin_event(line, start::event);
    line.field(start::origin, origin);
    if (unseen_fork) line.field_bool(start::unseen_fork, true);
    line.field(start::image, static_cast<std::int64_t>(image));
    line.field(start::initialised_by, p.initialised_by);
    line.field(start::ppid, static_cast<std::int64_t>(p.ppid));
    line.field(start::host, p.host);
    line.key(start::rank);
    if (p.rank >= 0)
        line.i64(p.rank);
    else
        line.null();
    line.key(start::launcher);
    if (p.launcher)
        line.str(p.launcher);
    else
        line.null();
    line.field(start::exe, p.exe);
    line.key(start::cmdline);
    line.open_array();
    for (std::size_t i = 0; i < p.cmdline_len;) {
        std::size_t n = std::strlen(p.cmdline + i);
        line.str(p.cmdline + i, n);
        i += n + 1;
    }
    line.close_array();
    if (p.cmdline_truncated) line.field_bool(start::cmdline_truncated, true);
    line.field_u(start::realtime_ns, p.start_real_ns);
    line.field_u(start::monotonic_ns, p.start_mono_ns);
    CpuMask mask;
    mask.read_thread(0);
    line.field_mask(start::cpuset, mask);
    line.field(start::cpu, static_cast<std::int64_t>(sched_getcpu()));
    char text[4096];
    line.key(start::cgroup_cpuset);
    if (read_cgroup_cpuset(text, sizeof text) > 0)
        line.str(text);
    else
        line.null();
    line.key(start::online_cpus);
    if (read_online_cpus(text, sizeof text) > 0)
        line.str(text);
    else
        line.null();
    add_cpu_quota(line, true);
    line.field(start::log, p.log.file_name());
    line.field_u(start::stream, p.log.stream());
    add_environment(line);
    line.key(start::tracer);
    line.open_object();
    line.field(start::tracer_info::version, STACKSAGE_VERSION);
    line.field(start::tracer_info::schema, static_cast<std::int64_t>(kSchemaVersion));
    line.close_object();
    emit(line, start::event);
    big_line_lock().unlock();
}

void register_exit_recorder() { on_exit(&on_process_exit, nullptr); }

namespace {

real::MainFn g_application_main = nullptr;

int main_with_exit_recorder(int argc, char** argv, char** envp) {
    register_exit_recorder();  // after _dl_fini's registration: see on_process_exit
    return g_application_main(argc, argv, envp);
}

}  // namespace

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

// Every dynamically linked program's _start calls this through the PLT; the
// application's main is wrapped so that the exit recorder is registered from
// inside it (see on_process_exit).
STACKSAGE_EXPORT int __libc_start_main(real::MainFn main, int argc, char** argv, void (*init)(), void (*fini)(),
                                       void (*rtld_fini)(), void* stack_end) {
    auto real_start = real::__libc_start_main();
    if (real_start == nullptr) {
        // Cannot happen with glibc; without it there is no way to start main.
        tell_stderr_once("stacksage: __libc_start_main not found\n", 39);
        raw::exit_group(127);
    }
    g_application_main = main;
    return real_start(&main_with_exit_recorder, argc, argv, init, fini, rtld_fini, stack_end);
}

STACKSAGE_EXPORT pid_t fork() {
    auto real_fork = real::fork();
    if (real_fork == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    if (!tracing_ready()) return real_fork();
    pid_t child = -1;
    {
        // Until the child has its own log: a handler there would find it
        // still the parent's (new_process_detector.hpp).
        SignalsBlocked blocked;
        child = real_fork();
        // Only async-signal-safe work from here: the parent may have had threads.
        if (child == 0) reinitialise_in_child();
    }
    if (child == 0) return 0;
    int saved = errno;
    {
        RecorderScope scope;
        namespace schema = stacksage::event_schema;
        char buf[256];
        JsonLine line(buf, sizeof buf);
        begin_event(line, child > 0 ? schema::fork::event : schema::fork_failed::event);
        if (child > 0)
            line.field(schema::fork::child_pid, static_cast<std::int64_t>(child));
        else
            line.field(schema::fork_failed::errno_, static_cast<std::int64_t>(saved));
        emit(line, schema::fork::event);
    }
    errno = saved;
    return child;
}

// daemon(3) forks and, in the parent, calls _exit(0) inside glibc, past our
// fork and _exit: its parent's log would end without process_end and its
// child would be found only at its first event. The same steps as glibc's
// (misc/daemon.c), through our own fork() and _exit().
STACKSAGE_EXPORT int daemon(int nochdir, int noclose) {
    switch (fork()) {
        case -1: return -1;
        case 0: break;
        default: _exit(0);
    }
    if (setsid() == -1) return -1;
    if (nochdir == 0) (void)chdir("/");
    if (noclose == 0) {
        // Not a cancellation point, as in glibc (raw open and fstat).
        const long fd = raw::openat(AT_FDCWD, "/dev/null", O_RDWR);
        if (fd < 0) {
            errno = static_cast<int>(-fd);
            return -1;
        }
        struct stat st{};
        const long rc = raw::fstat(static_cast<int>(fd), &st);
        if (rc != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
            raw::close(static_cast<int>(fd));
            errno = rc != 0 ? static_cast<int>(-rc) : ENODEV;
            return -1;
        }
        (void)dup2(static_cast<int>(fd), STDIN_FILENO);
        (void)dup2(static_cast<int>(fd), STDOUT_FILENO);
        (void)dup2(static_cast<int>(fd), STDERR_FILENO);
        if (fd > 2) raw::close(static_cast<int>(fd));
    }
    return 0;
}

STACKSAGE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
    auto f = real::execve();
    return traced_exec(path, argv, envp, [&](char* const* env) { return f(path, argv, env ? env : envp); });
}

STACKSAGE_EXPORT int execv(const char* path, char* const argv[]) {
    auto f = real::execv();
    return traced_exec(path, argv, environ, [&](char* const* env) {
        return env ? real::execve()(path, argv, env) : f(path, argv);
    });
}

STACKSAGE_EXPORT int execvp(const char* file, char* const argv[]) {
    auto f = real::execvp();
    return traced_exec(file, argv, environ, [&](char* const* env) {
        return env ? real::execvpe()(file, argv, env) : f(file, argv);
    });
}

STACKSAGE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
    auto f = real::execvpe();
    return traced_exec(file, argv, envp, [&](char* const* env) { return f(file, argv, env ? env : envp); });
}

// glibc's fexecve calls the execveat system call itself (or execve of
// /proc/self/fd/N), past the two interposers above.
STACKSAGE_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
    auto f = real::fexecve();
    if (f == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    char path[4200];
    if (tracing_ready()) describe_exec_file(path, sizeof path, fd, nullptr);
    return traced_exec(path, argv, envp, [&](char* const* env) { return f(fd, argv, env ? env : envp); });
}

STACKSAGE_EXPORT int execveat(int dirfd, const char* pathname, char* const argv[], char* const envp[], int flags) {
    auto f = real::execveat();
    auto call = [&](char* const* env) -> int {
        if (f != nullptr) return f(dirfd, pathname, argv, env ? env : envp, flags);
        const long rc = raw::syscall6(SYS_execveat, dirfd, reinterpret_cast<long>(pathname),
                                      reinterpret_cast<long>(argv), reinterpret_cast<long>(env ? env : envp), flags);
        errno = static_cast<int>(-rc);
        return -1;
    };
    char path[4200];
    if (tracing_ready()) describe_exec_file(path, sizeof path, dirfd, pathname);
    return traced_exec(path, argv, envp, call);
}

namespace stacksage::preload {

// syscall(SYS_execve, ...) and syscall(SYS_execveat, ...), from the
// syscall() interposer (affinity_events.cpp): recorded as the calls above.
long traced_exec_syscall(long number, long a1, long a2, long a3, long a4, long a5) {
    auto real_syscall = real::syscall();
    auto call = [&](char* const* env) -> int {
        const long envp = env != nullptr ? reinterpret_cast<long>(env) : (number == SYS_execve ? a3 : a4);
        if (real_syscall != nullptr)
            return static_cast<int>(number == SYS_execve ? real_syscall(number, a1, a2, envp)
                                                         : real_syscall(number, a1, a2, a3, envp, a5));
        const long rc = number == SYS_execve ? raw::syscall6(number, a1, a2, envp)
                                             : raw::syscall6(number, a1, a2, a3, envp, a5);
        errno = static_cast<int>(-rc);
        return -1;
    };
    auto* argv = reinterpret_cast<char* const*>(number == SYS_execve ? a2 : a3);
    auto* envp = reinterpret_cast<char* const*>(number == SYS_execve ? a3 : a4);
    char path[4200];
    if (tracing_ready()) {
        if (number == SYS_execve)
            TextBuffer(path, sizeof path).add(reinterpret_cast<const char*>(a1));
        else
            describe_exec_file(path, sizeof path, static_cast<int>(a1), reinterpret_cast<const char*>(a2));
    }
    return traced_exec(path, argv, envp, call);
}

}  // namespace stacksage::preload

namespace {
// Collects execl's variadic arguments (after arg0) into argv; returns false
// when there are more than fit. For execle, *envp receives the environment.
bool gather_execl_args(const char* arg0, va_list ap, char** argv, char*** envp) {
    int n = 0;
    argv[n++] = const_cast<char*>(arg0);
    while (arg0 != nullptr) {
        char* a = va_arg(ap, char*);
        if (n >= kMaxExeclArgs) return false;
        argv[n++] = a;
        if (a == nullptr) break;
    }
    if (envp != nullptr) *envp = va_arg(ap, char**);
    return true;
}
}  // namespace

STACKSAGE_EXPORT int execl(const char* path, const char* arg, ...) {
    char* argv[kMaxExeclArgs];
    va_list ap;
    va_start(ap, arg);
    bool ok = gather_execl_args(arg, ap, argv, nullptr);
    va_end(ap);
    if (!ok) {
        errno = E2BIG;
        return -1;
    }
    return execv(path, argv);
}

STACKSAGE_EXPORT int execlp(const char* file, const char* arg, ...) {
    char* argv[kMaxExeclArgs];
    va_list ap;
    va_start(ap, arg);
    bool ok = gather_execl_args(arg, ap, argv, nullptr);
    va_end(ap);
    if (!ok) {
        errno = E2BIG;
        return -1;
    }
    return execvp(file, argv);
}

STACKSAGE_EXPORT int execle(const char* path, const char* arg, ...) {
    char* argv[kMaxExeclArgs];
    char** envp = nullptr;
    va_list ap;
    va_start(ap, arg);
    bool ok = gather_execl_args(arg, ap, argv, &envp);
    va_end(ap);
    if (!ok) {
        errno = E2BIG;
        return -1;
    }
    return execve(path, argv, envp);
}

STACKSAGE_EXPORT void _exit(int status) {
    if (is_our_process() && process().state.load() == static_cast<int>(TracerState::Ready)) {
        // From a signal handler that interrupted the recorder on this thread
        // (threads being created when the signal came): the end is still
        // written, with what is safe to do there.
        const bool interrupted = inside_recorder();
        if (!interrupted) finish_sampling_at_exit();
        write_process_end("_exit", status, interrupted);
        process().log.finish(/*from_signal=*/interrupted);
    }
    auto f = real::_exit();
    if (f != nullptr) f(status);
    raw::syscall6(SYS_exit_group, status);
    __builtin_unreachable();
}

STACKSAGE_EXPORT void _Exit(int status) {
    if (is_our_process() && process().state.load() == static_cast<int>(TracerState::Ready)) {
        // From a signal handler that interrupted the recorder on this thread
        // (threads being created when the signal came): the end is still
        // written, with what is safe to do there.
        const bool interrupted = inside_recorder();
        if (!interrupted) finish_sampling_at_exit();
        write_process_end("_exit", status, interrupted);
        process().log.finish(/*from_signal=*/interrupted);
    }
    auto f = real::_Exit();
    if (f != nullptr) f(status);
    raw::syscall6(SYS_exit_group, status);
    __builtin_unreachable();
}
