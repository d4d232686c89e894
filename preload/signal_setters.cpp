// Every libc function that sets a signal's disposition, besides sigaction().
//
// glibc implements them with an internal call to sigaction that no
// interposer sees: left alone, signal() in strict C (-std=c11 makes it
// __sysv_signal), bsd_signal, sysv_signal, sigset and sigignore would put the
// application's handler in the kernel in place of the recorder's, and the
// recorder's copy of the disposition would go stale. Each is built here on
// the interposed sigaction, with glibc's own flags and mask (glibc 2.36:
// sysdeps/posix/signal.c, sysv_signal.c, sigset.c, sigignore.c), so the
// signal stays recorded and the application reads back what it set.
// siginterrupt changes the handler that is there (ours, in the kernel): libc
// does that, and the application's copy follows.
//
// A signal the recorder does not route (not monitored, the recorder not
// ready, or called from inside it) goes straight to libc's function.
#include <errno.h>
#include <signal.h>

#include "preload/real_functions.hpp"
#include "preload/signal_events.hpp"

namespace stacksage::preload {
namespace {

// A handler set through the interposed sigaction with glibc's flags; the
// signal itself blocked while the handler runs when block_itself.
sighandler_t set_handler(int sig, sighandler_t handler, int flags, bool block_itself) {
    if (handler == SIG_ERR || sig < 1 || sig >= NSIG) {
        errno = EINVAL;
        return SIG_ERR;
    }
    struct sigaction act {};
    struct sigaction old {};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    if (block_itself) sigaddset(&act.sa_mask, sig);
    act.sa_flags = flags;
    if (intercepted_sigaction(sig, &act, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}

// signal() with BSD semantics (glibc's signal, ssignal, bsd_signal): the
// handler stays installed, the signal is blocked while it runs, interrupted
// calls restart unless siginterrupt() said otherwise.
sighandler_t set_bsd(int sig, sighandler_t handler) {
    return set_handler(sig, handler, restarts_after_signal(sig) ? SA_RESTART : 0, true);
}

// signal() with System V semantics (__sysv_signal, sysv_signal; strict C's
// signal): reset to the default on delivery, not blocked while it runs, no
// restart. (glibc also sets SA_INTERRUPT, a flag Linux neither has nor keeps.)
sighandler_t set_sysv(int sig, sighandler_t handler) {
    return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

// sigset(): SIG_HOLD blocks the signal and leaves the disposition; anything
// else sets it (no flags, empty mask) and unblocks the signal. Returns
// SIG_HOLD when the signal was blocked before, else the previous handler.
sighandler_t set_sigset(int sig, sighandler_t disposition) {
    sigset_t set;
    sigemptyset(&set);
    if (sigaddset(&set, sig) < 0) return SIG_ERR;
    sigset_t before;
    if (disposition == SIG_HOLD) {
        if (sigprocmask(SIG_BLOCK, &set, &before) < 0) return SIG_ERR;
        if (sigismember(&before, sig)) return SIG_HOLD;
        struct sigaction old {};
        if (intercepted_sigaction(sig, nullptr, &old) < 0) return SIG_ERR;
        return old.sa_handler;
    }
    struct sigaction act {};
    struct sigaction old {};
    act.sa_handler = disposition;
    sigemptyset(&act.sa_mask);
    if (intercepted_sigaction(sig, &act, &old) < 0) return SIG_ERR;
    if (sigprocmask(SIG_UNBLOCK, &set, &before) < 0) return SIG_ERR;
    return sigismember(&before, sig) ? SIG_HOLD : old.sa_handler;
}

int set_ignored(int sig) {
    struct sigaction act {};
    act.sa_handler = SIG_IGN;
    sigemptyset(&act.sa_mask);
    return intercepted_sigaction(sig, &act, nullptr);
}

// When the recorder does not route sig: libc's own function, by name.
template <class R, class... Params, class... Args>
R forward(R (*real_fn)(Params...), R failed, Args... args) {
    if (real_fn == nullptr) {
        errno = ENOSYS;
        return failed;
    }
    return real_fn(args...);
}

}  // namespace
}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

// Each setter: the recorder's version for a signal it routes, libc's own otherwise.
#define STACKSAGE_SIGNAL_SETTER(name, setter)                                                 \
    STACKSAGE_EXPORT sighandler_t name(int sig, sighandler_t handler) {                       \
        if (!routes_signal(sig)) return forward(real::name(), SIG_ERR, sig, handler);         \
        return setter(sig, handler);                                                          \
    }

STACKSAGE_SIGNAL_SETTER(signal, set_bsd)
STACKSAGE_SIGNAL_SETTER(ssignal, set_bsd)
STACKSAGE_SIGNAL_SETTER(bsd_signal, set_bsd)
STACKSAGE_SIGNAL_SETTER(__sysv_signal, set_sysv)
STACKSAGE_SIGNAL_SETTER(sysv_signal, set_sysv)
STACKSAGE_SIGNAL_SETTER(sigset, set_sigset)
#undef STACKSAGE_SIGNAL_SETTER

STACKSAGE_EXPORT int sigignore(int sig) {
    if (!routes_signal(sig)) return forward(real::sigignore(), -1, sig);
    return set_ignored(sig);
}

STACKSAGE_EXPORT int siginterrupt(int sig, int interrupt) {
    const int rc = forward(real::siginterrupt(), -1, sig, interrupt);
    if (rc == 0) note_siginterrupt(sig, interrupt != 0);
    return rc;
}
