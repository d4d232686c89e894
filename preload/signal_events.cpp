// Fatal signals: recorded, then the default action or the application's own
// handler happens exactly as it would have without us.
//
// For each signal whose default action ends the process we keep the
// disposition the application believes is installed, and install our handler
// in the kernel in its place, with the application's flags and mask. Our
// handler writes one "signal" line, then either calls the application's
// handler or restores the default and re-raises. sigaction()/signal() are
// interposed so the application keeps seeing (and changing) its own
// disposition. Signals set to SIG_IGN are left to the kernel entirely.
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <atomic>

#include "preload/real_functions.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

void write_process_end_at_fatal_signal(int signal);  // process_events.cpp

namespace {

constexpr int kMonitored[] = {SIGHUP,  SIGINT,  SIGQUIT, SIGILL,  SIGTRAP, SIGABRT,
                              SIGBUS,  SIGFPE,  SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE,
                              SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGSYS};
constexpr int kMaxSignal = 65;
// Applications that use signals for their own purposes (a SIGSEGV-driven
// runtime, a SIGALRM timer) must not flood the log.
constexpr int kMaxRecordsPerSignal = 16;

struct Disposition {
    struct sigaction app{};          // what the application believes is installed
    std::atomic<bool> ours{false};   // our handler is in the kernel for this signal
    std::atomic<int> recorded{0};
};
Disposition g_dispositions[kMaxSignal];
SpinLock g_disposition_lock;  // between concurrent sigaction() calls only
// > 0 while this thread runs an application's handler that our handler
// called. A handler that calls exit() never returns here: the exit recorder
// sees that it runs inside a signal handler (see in_application_signal_handler).
__attribute__((tls_model("initial-exec"))) thread_local int g_app_handler_depth = 0;

// The thread writing the process's end at a fatal signal (0: none yet), and
// whether it is done. A second fatal signal handled meanwhile on another
// thread (timeout sends SIGTERM to the child and to its process group: two
// deliveries, two threads) waits for those lines before its default action
// ends the process.
constinit std::atomic<int> g_fatal_end_writer{0};
constinit std::atomic<bool> g_fatal_end_written{false};
// The longest a second fatal signal waits: the end of a process with
// thousands of live threads takes milliseconds; a writer that never
// finishes (stopped, or itself crashed) must not keep the process alive.
constexpr int kFatalEndWaitMs = 2000;

// Writes the process's end once, whichever thread's fatal signal came first.
void finish_at_fatal_signal(int sig) {
    const int me = raw::gettid();
    int writer = 0;
    if (g_fatal_end_writer.compare_exchange_strong(writer, me, std::memory_order_acq_rel)) {
        write_process_end_at_fatal_signal(sig);
        // The log keeps only the bytes written (never waiting for a lock
        // this thread may hold).
        process().log.finish(true);
        g_fatal_end_written.store(true, std::memory_order_release);
        return;
    }
    if (writer == me) return;  // a fault inside the writing itself: end now
    const struct timespec ms{0, 1'000'000};
    for (int waited = 0; waited < kFatalEndWaitMs && !g_fatal_end_written.load(std::memory_order_acquire); ++waited)
        raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&ms), 0);
}

bool is_monitored(int sig) {
    for (int s : kMonitored)
        if (s == sig) return true;
    return false;
}

const char* signal_name(int sig) {
    switch (sig) {
        case SIGHUP: return "SIGHUP";
        case SIGINT: return "SIGINT";
        case SIGQUIT: return "SIGQUIT";
        case SIGILL: return "SIGILL";
        case SIGTRAP: return "SIGTRAP";
        case SIGABRT: return "SIGABRT";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGUSR1: return "SIGUSR1";
        case SIGSEGV: return "SIGSEGV";
        case SIGUSR2: return "SIGUSR2";
        case SIGPIPE: return "SIGPIPE";
        case SIGALRM: return "SIGALRM";
        case SIGTERM: return "SIGTERM";
        case SIGXCPU: return "SIGXCPU";
        case SIGXFSZ: return "SIGXFSZ";
        case SIGSYS: return "SIGSYS";
        default: return "?";
    }
}

bool is_fault(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
}

void handler(int sig, siginfo_t* info, void* context);

// Builds the kernel-side action that routes sig through our handler while
// honouring what the application asked for.
struct sigaction routed_action(const struct sigaction& app) {
    struct sigaction k{};
    k.sa_sigaction = &handler;
    if (app.sa_handler == SIG_DFL) {
        sigemptyset(&k.sa_mask);
        k.sa_flags = SA_SIGINFO | SA_ONSTACK;  // the alternate stack, if the thread has one
    } else {
        k.sa_mask = app.sa_mask;
        k.sa_flags = app.sa_flags | SA_SIGINFO;
    }
    return k;
}

void record(int sig, const siginfo_t* info, const char* disposition) {
    Disposition& d = g_dispositions[sig];
    if (d.recorded.fetch_add(1, std::memory_order_relaxed) >= kMaxRecordsPerSignal) return;
    if (process().state.load(std::memory_order_acquire) != static_cast<int>(TracerState::Ready))
        return;
    if (raw::getpid() != process().pid) return;
    RecorderScope scope;
    namespace signal_event = event_schema::signal;
    char buf[512];
    JsonLine line(buf, sizeof buf);
    begin_event(line, signal_event::event);
    line.field(signal_event::signal, static_cast<std::int64_t>(sig));
    line.field(signal_event::name, signal_name(sig));
    line.field(signal_event::disposition, disposition);
    line.field_bool(signal_event::fatal, disposition[0] == 'd');
    if (info != nullptr) {
        line.field(signal_event::code, static_cast<std::int64_t>(info->si_code));
        if (is_fault(sig))
            line.field_hex(signal_event::addr, reinterpret_cast<std::uintptr_t>(info->si_addr));
        else if (info->si_code == SI_USER || info->si_code == SI_TKILL)
            line.field(signal_event::sender_pid, static_cast<std::int64_t>(info->si_pid));
    }
    emit(line, signal_event::event);
}

void handler(int sig, siginfo_t* info, void* context) {
    const int saved_errno = errno;
    if (sig <= 0 || sig >= kMaxSignal) return;
    Disposition& d = g_dispositions[sig];
    struct sigaction app = d.app;  // a copy: the application may change it meanwhile
    if (app.sa_handler == SIG_IGN) return;  // ignored in the meantime
    if (app.sa_handler == SIG_DFL) {
        record(sig, info, "default");
        // The process is about to end: what its end would have said (the
        // threads' CPU times, the process's usage) is written now, by the
        // first thread to get here; the others wait for it.
        if (process().state.load(std::memory_order_acquire) ==
                static_cast<int>(TracerState::Ready) &&
            raw::getpid() == process().pid)
            finish_at_fatal_signal(sig);
        // Restore the default action and re-raise: the signal stays blocked
        // until we return, then the kernel delivers it and the process ends
        // the way it would have (core dump included).
        struct sigaction dfl{};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        if (auto real_sigaction = real::sigaction()) real_sigaction(sig, &dfl, nullptr);
        d.ours.store(false, std::memory_order_relaxed);
        raw::tgkill(raw::getpid(), raw::gettid(), sig);
        errno = saved_errno;
        return;
    }
    record(sig, info, "handler");
    if (app.sa_flags & SA_RESETHAND) {
        // The kernel has already reset the disposition; mirror it.
        d.app.sa_handler = SIG_DFL;
        d.app.sa_flags = 0;
        d.ours.store(false, std::memory_order_relaxed);
    }
    errno = saved_errno;
    ++g_app_handler_depth;
    if (app.sa_flags & SA_SIGINFO)
        app.sa_sigaction(sig, info, context);
    else
        app.sa_handler(sig);
    --g_app_handler_depth;
    // abort() ends the process by SIGABRT once the application's handler
    // returns: glibc resets the disposition and raises the signal again
    // itself, past the recorder. Finish the log now so that it ends whole
    // (no NUL tail). Should the process go on after all (a SIGABRT raised by
    // other means), its later lines are still written, through pwrite.
    if (sig == SIGABRT &&
        process().state.load(std::memory_order_acquire) == static_cast<int>(TracerState::Ready) &&
        raw::getpid() == process().pid) {
        const int errno_after_handler = errno;
        process().log.finish(true);
        errno = errno_after_handler;
    }
}

// Takes over sig from the kernel's current disposition (at start-up, where an
// earlier constructor may already have installed a handler).
void take_over(int sig) {
    auto real_sigaction = real::sigaction();
    if (real_sigaction == nullptr) return;
    struct sigaction current{};
    if (real_sigaction(sig, nullptr, &current) != 0) return;
    g_dispositions[sig].app = current;
    if (current.sa_handler == SIG_IGN) return;
    struct sigaction k = routed_action(current);
    if (real_sigaction(sig, &k, nullptr) == 0)
        g_dispositions[sig].ours.store(true, std::memory_order_relaxed);
}

}  // namespace

void install_signal_recorder() {
    g_disposition_lock.lock();
    for (int sig : kMonitored) take_over(sig);
    g_disposition_lock.unlock();
}

bool in_application_signal_handler() { return g_app_handler_depth > 0; }

bool routes_signal(int sig) {
    return sig > 0 && sig < kMaxSignal && is_monitored(sig) &&
           process().state.load(std::memory_order_acquire) ==
               static_cast<int>(TracerState::Ready) &&
           !inside_recorder();
}

// Our sigaction: the application's view of monitored signals.
int intercepted_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    auto real_sigaction = real::sigaction();
    if (real_sigaction == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    if (!routes_signal(sig)) return real_sigaction(sig, act, old);
    g_disposition_lock.lock();
    Disposition& d = g_dispositions[sig];
    if (!d.ours.load(std::memory_order_relaxed)) {
        // Not routed (ignored, or reset by SA_RESETHAND): the kernel's view is the truth.
        struct sigaction current{};
        real_sigaction(sig, nullptr, &current);
        d.app = current;
    }
    struct sigaction previous = d.app;
    int rc = 0;
    if (act != nullptr) {
        if (act->sa_handler == SIG_IGN) {
            rc = real_sigaction(sig, act, nullptr);
            if (rc == 0) d.ours.store(false, std::memory_order_relaxed);
        } else {
            struct sigaction k = routed_action(*act);
            rc = real_sigaction(sig, &k, nullptr);
            if (rc == 0) d.ours.store(true, std::memory_order_relaxed);
        }
        if (rc == 0) d.app = *act;
    }
    g_disposition_lock.unlock();
    if (rc == 0 && old != nullptr) *old = previous;
    return rc;
}

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    return intercepted_sigaction(sig, act, old);
}

// glibc's signal() has BSD semantics: the handler stays installed, the
// signal is blocked while it runs, interrupted calls restart.
STACKSAGE_EXPORT sighandler_t signal(int sig, sighandler_t handler) {
    if (!routes_signal(sig)) {
        auto real_signal = real::signal();
        if (real_signal == nullptr) return SIG_ERR;
        return real_signal(sig, handler);
    }
    struct sigaction act{};
    struct sigaction old{};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (intercepted_sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}
