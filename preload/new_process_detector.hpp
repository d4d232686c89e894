// Tells, at the cost of one memory load, whether the calling code runs in a
// process the recorder has not set itself up in: the child of a fork its
// interposers did not see (_Fork(), syscall(SYS_fork), clone() without
// CLONE_VM, the fork inside glibc's daemon() or forkpty()). Such a child
// inherits the parent's state, its log's mapping and write offset included;
// without this check it would write into its parent's log under the
// parent's pid.
//
// How: one word on a private anonymous page marked MADV_WIPEONFORK (Linux
// 4.14 and later). The recorder writes its pid there; the kernel gives every
// child of fork (whatever made it) that page filled with zeros. A child that
// shares our memory (vfork, CLONE_VM) sees the word unchanged: the
// interposers that such a child can reach check getpid() themselves.
// Where the page cannot be had (an older kernel, no memory), the word is a
// static one that never reads zero: nothing is detected, as before.
//
// Async-signal-safe; only raw system calls.
#pragma once

#include <atomic>

namespace stacksage::preload {

namespace new_process_detector_detail {
extern std::atomic<const volatile int*> g_owner_word;
}

// At the recorder's start and in every new process it sets itself up in:
// writes pid into the word (mapping the page on the first call).
// \return false when the page could not be had (nothing will be detected).
bool arm_new_process_detector(int pid);

// Claims the set-up of a new process for the caller: true for exactly one
// caller in a new process (the word goes from 0 to -1, "being set up");
// false when the word is not 0 (armed, or another caller is setting up).
bool claim_new_process();

// True in a process the recorder has not set itself up in yet (the word
// reads 0), and while one caller is setting it up (-1).
inline bool in_new_process() {
    return *new_process_detector_detail::g_owner_word.load(std::memory_order_relaxed) <= 0;
}

}  // namespace stacksage::preload
