#include "preload/recorder_threads.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <time.h>

#include <atomic>

#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

// The recorder starts one drain thread per process; a few spare slots.
constexpr int kSlots = 8;
constinit std::atomic<int> g_tids[kSlots] = {};
// Recorder threads created but not registered yet.
constinit std::atomic<int> g_starting{0};

// Never below 0: a thread registered without recorder_thread_starting (a
// test) must not make a later start look finished.
void one_less_starting() {
    int n = g_starting.load(std::memory_order_acquire);
    while (n > 0 && !g_starting.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {}
}

}  // namespace

void recorder_thread_starting() { g_starting.fetch_add(1, std::memory_order_acq_rel); }

void recorder_thread_start_failed() { one_less_starting(); }

bool register_this_recorder_thread(const char* name) {
    // Named before it is registered: a reader of an older log, or one that
    // races the registration, still recognises it by its name.
    raw::syscall6(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>(name));
    const int tid = raw::gettid();
    bool registered = false;
    for (auto& slot : g_tids) {
        int expected = 0;
        if (slot.compare_exchange_strong(expected, tid, std::memory_order_acq_rel)) {
            registered = true;
            break;
        }
    }
    // Also when full: a snapshot must not wait for a thread that never registers.
    one_less_starting();
    return registered;
}

void unregister_this_recorder_thread() {
    const int tid = raw::gettid();
    for (auto& slot : g_tids) {
        int expected = tid;
        if (slot.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) return;
    }
}

bool is_recorder_thread(int tid) {
    if (tid <= 0) return false;
    for (const auto& slot : g_tids)
        if (slot.load(std::memory_order_acquire) == tid) return true;
    return false;
}

void wait_for_starting_recorder_threads() {
    for (int i = 0; i < 500 && g_starting.load(std::memory_order_acquire) > 0; ++i) {
        struct timespec pause{0, 100'000};
        raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
    }
}

namespace {

int recorder_thread_count() {
    int recorder = g_starting.load(std::memory_order_acquire);
    for (const auto& slot : g_tids)
        if (slot.load(std::memory_order_acquire) != 0) ++recorder;
    return recorder;
}

// /proc/self/stat's answer: "pid (comm) S ppid ...": the state is the
// leader's; num_threads is the 20th field, the 18th after the state. comm
// may hold spaces and ')'. Opens a descriptor for the read.
bool only_recorder_threads_left_by_stat() {
    char stat[1024];
    const long n = raw::read_small_file(AT_FDCWD, "/proc/self/stat", stat, sizeof stat);
    if (n <= 0) return false;
    const char* end = stat + n;
    const char* p = end;
    while (p > stat && p[-1] != ')') --p;
    if (p == stat || end - p < 3) return false;
    const char state = p[1];
    if (state != 'Z') return false;  // the main thread is still there
    p += 2;
    for (int field = 0; field < 17 && p < end; ++p)
        if (*p == ' ') ++field;
    long threads = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) threads = threads * 10 + (*p - '0');
    // The zombie leader is still counted until the process ends.
    return threads > 0 && threads <= 1 + recorder_thread_count();
}

}  // namespace

bool only_recorder_threads_left() {
    // The leader's id as this /proc names it (it may be another pid
    // namespace's): /proc/self is a link to it.
    char pid[24];
    const long pid_len = raw::readlinkat(AT_FDCWD, "/proc/self", pid, sizeof pid - 1);
    if (pid_len <= 0) return only_recorder_threads_left_by_stat();
    pid[pid_len] = '\0';
    char path[64];
    TextBuffer(path, sizeof path).add("/proc/self/task/").add(pid).add("/cwd");
    char target[8];
    const long link = raw::readlinkat(AT_FDCWD, path, target, sizeof target);
    if (link >= 0) return false;  // the main thread is still there
    if (link != -ENOENT) return only_recorder_threads_left_by_stat();
    struct stat task{};
    if (raw::fstatat(AT_FDCWD, "/proc/self/task", &task, 0) != 0 || task.st_nlink < 3)
        return only_recorder_threads_left_by_stat();
    // The leader that left is still counted until the process ends.
    const long threads = static_cast<long>(task.st_nlink) - 2;
    return threads <= 1 + recorder_thread_count();
}

void forget_recorder_threads() {
    for (auto& slot : g_tids) slot.store(0, std::memory_order_relaxed);
    g_starting.store(0, std::memory_order_relaxed);
}

}  // namespace stacksage::preload
