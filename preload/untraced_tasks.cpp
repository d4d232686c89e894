#include "preload/untraced_tasks.hpp"

#include <fcntl.h>
#include <time.h>

#include <algorithm>

#include "core/formats/event_schema.hpp"
#include "preload/cpu_mask.hpp"
#include "preload/json_line.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/task_list.hpp"
#include "preload/text.hpp"
#include "preload/thread_cpu_clock.hpp"
#include "preload/thread_launch.hpp"
#include "preload/thread_registry.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// The registry's tids, sorted. Static: the end runs once, maybe on a small
// signal stack.
constexpr int kMaxRegistered = 16384;
int g_registered[kMaxRegistered];
int g_registered_count = 0;
bool g_registered_overflow = false;

void collect_registered(int tid, std::uint64_t, void*) {
    if (g_registered_count < kMaxRegistered) g_registered[g_registered_count++] = tid;
    else g_registered_overflow = true;
}

bool is_registered(int tid) {
    return std::binary_search(g_registered, g_registered + g_registered_count, tid);
}

bool registered_now(int tid) {
    struct Search {
        int tid;
        bool found;
    } search{tid, false};
    for_each_registered_thread(
        [](int t, std::uint64_t, void* context) {
            auto* s = static_cast<Search*>(context);
            if (t == s->tid) s->found = true;
        },
        &search);
    return search.found;
}

// A thread pthread_create has just cloned is in the task list before it
// stores its start and registers itself: written as untraced, its start
// would follow its usage line. While a creation is under way, an unknown
// task is given a moment to turn out to be ours (2 ms at most per walk;
// only an exit() while other threads create pays it).
constexpr std::uint64_t kCreationWaitNs = 2'000'000;
constexpr long kCreationPollNs = 50'000;

bool turns_out_traced(int tid, std::uint64_t& wait_left_ns) {
    if (start_pending_for(tid) || registered_now(tid)) return true;
    while (wait_left_ns > 0 && creation_under_way()) {
        struct timespec pause{0, kCreationPollNs};
        nanosleep(&pause, nullptr);
        wait_left_ns = wait_left_ns > kCreationPollNs ? wait_left_ns - kCreationPollNs : 0;
        if (start_pending_for(tid) || registered_now(tid)) return true;
    }
    return false;
}

// How long ago the kernel started the task, from field 22 of its stat (in
// USER_HZ ticks since boot, 100 on Linux) against CLOCK_BOOTTIME; 0 when
// unknown.
std::uint64_t age_ns(int tid) {
    char path[64];
    TextBuffer(path, sizeof path).add("/proc/self/task/").add_int(tid).add("/stat");
    char stat[1024];
    const long len = raw::read_small_file(AT_FDCWD, path, stat, sizeof stat);
    if (len <= 0) return 0;
    // The name (field 2) may hold spaces and parentheses: count from the last ')'.
    const char* p = nullptr;
    for (long i = len - 1; i >= 0; --i)
        if (stat[i] == ')') {
            p = stat + i + 1;
            break;
        }
    if (p == nullptr) return 0;
    for (int field = 2; field < 22 && *p != '\0';) {
        if (*p++ == ' ') ++field;
    }
    std::uint64_t ticks = 0;
    if (!read_decimal(p, UINT64_MAX / 10'000'000, ticks)) return 0;
    struct timespec now{};
    if (clock_gettime(CLOCK_BOOTTIME, &now) != 0) return 0;
    const std::uint64_t now_ns = static_cast<std::uint64_t>(now.tv_sec) * 1'000'000'000 + static_cast<std::uint64_t>(now.tv_nsec);
    const std::uint64_t started_ns = ticks * 10'000'000;  // 1 tick = 10 ms at USER_HZ 100
    return now_ns > started_ns ? now_ns - started_ns : 0;
}

void write_untraced(int tid, std::int64_t cpu_ns, const char* name, long name_len) {
    namespace usage = event_schema::thread_usage_at_exit;
    char buf[512];
    JsonLine line(buf, sizeof buf);
    begin_event(line, usage::event);
    line.field(usage::target_tid, static_cast<std::int64_t>(tid));
    line.field(usage::cpu_us, cpu_ns / 1000);
    if (const std::uint64_t age = age_ns(tid); age > 0) line.field_u(usage::duration_ns, age);
    line.field_bool(usage::untraced, true);
    if (name_len > 0) line.field(usage::name, name);
    CpuMask mask;
    if (mask.read_thread(tid)) line.field_mask(usage::cpuset, mask);
    emit(line, usage::event);
}

}  // namespace

std::int64_t write_usage_of_untraced_tasks() {
    g_registered_count = 0;
    g_registered_overflow = false;
    for_each_registered_thread(&collect_registered, nullptr);
    if (g_registered_overflow) return -1;
    std::sort(g_registered, g_registered + g_registered_count);
    const int pid = process().pid;
    std::int64_t recorder_ns = 0;
    int written = 0;
    std::uint64_t creation_wait_left_ns = kCreationWaitNs;
    const bool listed = for_each_task("/proc/self/task", [&](int tid) {
        if (tid == pid || is_registered(tid)) return;
        const std::int64_t cpu_ns = read_thread_cpu_ns(tid == current_tid() ? 0 : tid);
        if (cpu_ns < 0) return;  // ended meanwhile
        char name[64];
        const long name_len = read_task_name(tid, name);
        // Also a recorder thread not (or no longer) registered: the live
        // watcher's before it runs, or after it left the registry, when
        // exit() runs on it once the application's threads are all gone.
        if (is_recorder_thread(tid) || has_recorder_thread_name(name, static_cast<std::size_t>(name_len))) {
            recorder_ns += cpu_ns;
            return;
        }
        if (turns_out_traced(tid, creation_wait_left_ns)) return;
        if (written < kMaxUntracedTaskLines) {
            write_untraced(tid, cpu_ns, name, name_len);
            ++written;
        }
    });
    if (!listed) return -1;
    return recorder_ns / 1000;
}

}  // namespace stacksage::preload
