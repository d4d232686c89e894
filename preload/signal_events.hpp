// The application's view of the signal dispositions the recorder routes
// through its own handler (signal_events.cpp), for the other ways of setting
// a disposition (signal_setters.cpp).
#pragma once

#include <signal.h>

namespace stacksage::preload {

// Whether sig's disposition is routed through the recorder's handler now
// (a monitored signal, the recorder ready, not called from inside it).
bool routes_signal(int sig);

// sigaction() as the application sees it: sets what the application asked
// for (our handler in the kernel, calling the application's) and answers
// with the application's disposition. A disposition set around the recorder
// (a libc-internal call, a raw rt_sigaction) is found in the kernel and
// taken as the truth: the answer never comes from a stale copy.
int intercepted_sigaction(int sig, const struct sigaction* act, struct sigaction* old);

// siginterrupt(sig, flag) ran: the application's copy of sig's SA_RESTART
// follows (the kernel's was changed by libc), and later BSD signal() calls
// for sig install without SA_RESTART while flag is set, as glibc's do.
void note_siginterrupt(int sig, bool interrupt);
// Whether BSD signal() installs sig with SA_RESTART (see note_siginterrupt).
bool restarts_after_signal(int sig);

}  // namespace stacksage::preload
