// Fatal signals: recorded, then the default action or the application's own
// handler happens exactly as it would have without us.
//
// For each signal whose default action ends the process we keep the
// disposition the application believes is installed, and install our handler
// in the kernel in its place, with the application's flags and mask. Our
// handler writes one "signal" line, then either calls the application's
// handler or restores the default and re-raises. sigaction() and every
// flavour of signal() (signal_setters.cpp) are interposed so the application
// keeps seeing (and changing) its own disposition; one set around them is
// found in the kernel. Signals set to SIG_IGN are left to the kernel entirely.
#include "preload/signal_events.hpp"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include <atomic>
#include <cstdint>

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
// Between concurrent sigaction() calls. sigaction() is async-signal-safe: a
// handler that interrupted this very thread while it held the lock goes
// ahead without it rather than wait for itself forever.
class DispositionLock {
public:
    DispositionLock() : held_(take()) {}
    ~DispositionLock() {
        if (held_) owner_.store(0, std::memory_order_release);
    }
    DispositionLock(const DispositionLock&) = delete;
    DispositionLock& operator=(const DispositionLock&) = delete;

private:
    static bool take() {
        const int me = raw::gettid();
        for (;;) {
            int expected = 0;
            if (owner_.compare_exchange_weak(expected, me, std::memory_order_acquire)) return true;
            if (expected == me) return false;
            raw::syscall6(SYS_sched_yield);
        }
    }
    static constinit inline std::atomic<int> owner_{0};  // tid of the holder, 0 when free
    const bool held_;
};
// The signals siginterrupt() was last told to interrupt system calls (bit
// sig): glibc's BSD signal() then installs them without SA_RESTART.
constinit std::atomic<std::uint64_t> g_interrupting{0};

// The application's handlers that our handler called and that run on this
// thread now, innermost last, each by the stack address of our handler's
// frame. A handler that calls exit() never returns here: the exit recorder
// sees that it runs inside a signal handler (in_application_signal_handler).
// A handler left by siglongjmp never returns here either: its entry is found
// stale when asked, since the stack is then above it (a handler's own code
// and what it calls always run below its entry, on the stack it was entered
// on). Only levels beyond kTrackedHandlers (nesting that deep) are counted
// without an address and always taken as running: never a false "not in a
// handler", which would let exit() load the model writer inside one.
constexpr int kTrackedHandlers = 8;
struct HandlersRunning {
    int depth = 0;
    std::uintptr_t entry[kTrackedHandlers] = {};
};
__attribute__((tls_model("initial-exec"))) thread_local HandlersRunning g_handlers_running;

void enter_application_handler(std::uintptr_t entry) {
    HandlersRunning& h = g_handlers_running;
    if (h.depth < kTrackedHandlers) h.entry[h.depth] = entry;
    ++h.depth;
}

void leave_application_handler() {
    HandlersRunning& h = g_handlers_running;
    if (h.depth > 0) --h.depth;
}

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

// The kernel's flag for a signal-return trampoline given with the action
// (SA_RESTORER: <asm/signal.h> names it, glibc's <signal.h> does not; glibc
// sets it on x86_64, not on aarch64).
constexpr int kRestorerFlag = 0x04000000;

// libc gives the kernel its signal-return trampoline with every action it
// sets (SA_RESTORER, on x86_64): the application reads it back without us,
// so it does with us. Called right after libc set sig's action.
void take_restorer_from_kernel(int sig, struct sigaction& app) {
    auto real_sigaction = real::sigaction();
    struct sigaction installed{};
    if (real_sigaction == nullptr || real_sigaction(sig, nullptr, &installed) != 0) return;
    app.sa_flags |= installed.sa_flags & kRestorerFlag;
    app.sa_restorer = installed.sa_restorer;
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
    enter_application_handler(reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)));
    if (app.sa_flags & SA_SIGINFO)
        app.sa_sigaction(sig, info, context);
    else
        app.sa_handler(sig);
    leave_application_handler();
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
    DispositionLock lock;
    for (int sig : kMonitored) take_over(sig);
}

// noinline: the frame compared is this call's, below every frame of a
// handler that is still running on this thread.
__attribute__((noinline)) bool in_application_signal_handler() {
    HandlersRunning& h = g_handlers_running;
    const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    while (h.depth > 0 && h.depth <= kTrackedHandlers && h.entry[h.depth - 1] <= here) --h.depth;
    return h.depth > 0;
}

bool routes_signal(int sig) {
    return sig > 0 && sig < kMaxSignal && is_monitored(sig) &&
           process().state.load(std::memory_order_acquire) == static_cast<int>(TracerState::Ready) &&
           !inside_recorder();
}

int intercepted_sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    auto real_sigaction = real::sigaction();
    if (real_sigaction == nullptr) {
        errno = ENOSYS;
        return -1;
    }
    if (!routes_signal(sig)) return real_sigaction(sig, act, old);
    struct sigaction previous {};
    int rc = 0;
    {
        DispositionLock lock;
        Disposition& d = g_dispositions[sig];
        // What the kernel holds: unless it is our handler, the disposition was
        // set around us (or reset by SA_RESETHAND), and the kernel's is the truth.
        struct sigaction current {};
        if (real_sigaction(sig, nullptr, &current) == 0 && current.sa_sigaction != &handler) {
            d.app = current;
            d.ours.store(false, std::memory_order_relaxed);
        }
        previous = d.app;
        if (act != nullptr) {
            if (act->sa_handler == SIG_IGN) {
                rc = real_sigaction(sig, act, nullptr);
                if (rc == 0) d.ours.store(false, std::memory_order_relaxed);
            } else {
                struct sigaction k = routed_action(*act);
                rc = real_sigaction(sig, &k, nullptr);
                if (rc == 0) d.ours.store(true, std::memory_order_relaxed);
            }
            if (rc == 0) {
                d.app = *act;
                take_restorer_from_kernel(sig, d.app);
            }
        }
    }
    if (rc == 0 && old != nullptr) *old = previous;
    return rc;
}

void note_siginterrupt(int sig, bool interrupt) {
    if (sig <= 0 || sig >= 64) return;
    const std::uint64_t bit = std::uint64_t{1} << sig;
    if (interrupt) g_interrupting.fetch_or(bit, std::memory_order_relaxed);
    else g_interrupting.fetch_and(~bit, std::memory_order_relaxed);
    if (!routes_signal(sig)) return;
    DispositionLock lock;
    Disposition& d = g_dispositions[sig];
    if (d.ours.load(std::memory_order_relaxed)) {
        if (interrupt) d.app.sa_flags &= ~SA_RESTART;
        else d.app.sa_flags |= SA_RESTART;
        take_restorer_from_kernel(sig, d.app);  // libc set the action again
    }
}

bool restarts_after_signal(int sig) {
    return sig <= 0 || sig >= 64 || (g_interrupting.load(std::memory_order_relaxed) & (std::uint64_t{1} << sig)) == 0;
}

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    return intercepted_sigaction(sig, act, old);
}

// The same function under glibc's other public name.
STACKSAGE_EXPORT int __sigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    return intercepted_sigaction(sig, act, old);
}
