// The word that tells the recorder it runs in a child of a fork it did not
// see (preload/new_process_detector.hpp): armed in the process that set it,
// zero in every child of fork whatever made it, claimed by one caller only.
#include "preload/new_process_detector.hpp"

#include <gtest/gtest.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace stacksage::preload;

namespace {

// Runs body in a child made by a raw fork system call (no fork handlers, as
// _Fork() or syscall(SYS_fork)); body's result is the child's exit status.
int in_raw_child(int (*body)()) {
#ifdef SYS_fork
    const long pid = ::syscall(SYS_fork);
#else
    const long pid = ::syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
    if (pid == 0) ::_exit(body());
    int status = 0;
    ::waitpid(static_cast<pid_t>(pid), &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(PreloadNewProcessDetector, EveryChildOfForkIsNewAndClaimedOnce) {
    ASSERT_TRUE(arm_new_process_detector(::getpid())) << "MADV_WIPEONFORK (Linux 4.14) is missing";
    EXPECT_FALSE(in_new_process());
    EXPECT_FALSE(claim_new_process());
    const int child = in_raw_child([] {
        if (!in_new_process()) return 1;
        if (!claim_new_process()) return 2;
        if (claim_new_process()) return 3;      // once only
        if (!in_new_process()) return 4;        // being set up
        if (!arm_new_process_detector(::getpid())) return 5;
        return in_new_process() ? 6 : 0;
    });
    EXPECT_EQ(child, 0);
    // A child made by fork() too: the kernel wipes the page whoever forks.
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(in_new_process() ? 0 : 1);
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_FALSE(in_new_process());  // the parent stays armed
}
