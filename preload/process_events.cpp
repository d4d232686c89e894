// Process lifecycle: start (with the inherited placement), exit, _exit,
// fork and exec.
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>

#include "core/formats/launcher_environment.hpp"
#include "preload/cgroup_cpu_quota.hpp"
#include "preload/cgroup_cpuset.hpp"
#include "preload/environment.hpp"
#include "preload/real_functions.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/run_delay.hpp"
#include "preload/thread_cpu_clock.hpp"
#include "preload/tracer.hpp"

extern char** environ;

namespace stacksage::preload {

// Writes the model (or, with a reason not to, a "model" event saying why not).
void write_process_model_at_exit(const char* skip_reason);  // process_model_hook.cpp
bool in_application_signal_handler();  // signal_events.cpp
void finish_sampling_at_exit();      // sampling_hook.cpp
void write_usage_of_live_threads();  // thread_events.cpp

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
    // Threads that are never joined (a GNU OpenMP pool, detached helpers)
    // write no thread_end: their CPU time is read here, before the process's.
    if (!interrupted_recorder) write_usage_of_live_threads();
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
    // The throttling counters at the end (the cgroup's path is in
    // process_start). In a signal handler only on a stack known to be large:
    // the main thread's own, not an alternate one.
    if (signal == 0 || (raw::gettid() == p.pid && !on_alternate_signal_stack())) add_cpu_quota(line, false);
    emit(line, end::event);
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
    if (process().state.load() != static_cast<int>(TracerState::Ready)) return;
    if (raw::getpid() != process().pid) return;
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
                                        : nullptr);
    process().log.finish();  // the file keeps only the bytes written
}

// Only in the image that owns our state: a vfork child shares our memory and
// must not write into its parent's log under the parent's pid.
bool is_our_process() { return raw::getpid() == process().pid; }

// exec (argv given) or exec_failed (error given): both name the path.
void write_exec_event(const char* event, const char* path, char* const argv[], int error) {
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
    if (error != 0) line.field(event_schema::exec_failed::errno_, static_cast<std::int64_t>(error));
    emit(line, event);
}

template <class Call>
int traced_exec(const char* path, char* const argv[], Call&& call) {
    if (!tracing_ready() || !is_our_process()) return call();
    {
        RecorderScope scope;
        write_exec_event(event_schema::exec::event, path, argv, 0);
        // The new image opens its own log; this one keeps only the bytes
        // written (should exec fail, later lines go through pwrite).
        process().log.finish();
    }
    int rc = call();
    int saved = errno;
    {
        RecorderScope scope;
        write_exec_event(event_schema::exec_failed::event, path, nullptr, saved);
    }
    errno = saved;
    return rc;
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

void write_process_start(const char* origin, int image) {
    namespace start = event_schema::process_start;
    ProcessState& p = process();
    big_line_lock().lock();
    JsonLine line(big_line_buffer(), kBigLineBytes);
    begin_event(line, start::event);
    line.field(start::origin, origin);
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
    pid_t child = real_fork();
    if (child == 0) {
        // Only async-signal-safe work from here: the parent may have had threads.
        reinitialise_in_child();
        return 0;
    }
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

STACKSAGE_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
    auto f = real::execve();
    return traced_exec(path, argv, [&] { return f(path, argv, envp); });
}

STACKSAGE_EXPORT int execv(const char* path, char* const argv[]) {
    auto f = real::execv();
    return traced_exec(path, argv, [&] { return f(path, argv); });
}

STACKSAGE_EXPORT int execvp(const char* file, char* const argv[]) {
    auto f = real::execvp();
    return traced_exec(file, argv, [&] { return f(file, argv); });
}

STACKSAGE_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
    auto f = real::execvpe();
    return traced_exec(file, argv, [&] { return f(file, argv, envp); });
}

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
    if (process().state.load() == static_cast<int>(TracerState::Ready) && is_our_process()) {
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
    if (process().state.load() == static_cast<int>(TracerState::Ready) && is_our_process()) {
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
