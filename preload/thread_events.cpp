// Thread lifecycle: pthread_create (also std::thread, which reaches it
// through libstdc++), thread start and end, pthread_exit, thread names.
//
// The creating thread works out who created the thread (module of the
// caller and of the start routine), the affinity requested in the
// attributes and, when they request none, its own mask, which the new thread
// inherits (known_mask.hpp), into a launch slot; the new thread adds its own
// start's fields there and formats nothing: a thread that ends within 1 ms
// writes its start and end as one line at its end, a longer one's start is
// written once it is 1 ms old (thread_launch.hpp). A creation costs one
// write and no system call.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include <atomic>

#include "preload/caller_module.hpp"
#include "preload/known_mask.hpp"
#include "preload/module_table.hpp"
#include "preload/real_functions.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/run_delay.hpp"
#include "preload/sampling_hook.hpp"
#include "preload/thread_cpu_clock.hpp"
#include "preload/thread_launch.hpp"
#include "preload/thread_registry.hpp"
#include "preload/thread_start_writer.hpp"
#include "preload/thread_trampoline.h"
#include "preload/live_watcher.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// The creator's CPU time is read at most this often per thread: a reading
// of its CPU-time curve for the analyzer (a creator that computed before
// creating and then waited, analysis/activity.hpp), one system call of
// about 0.25 us, which a burst of creates pays once.
constexpr std::uint64_t kCreatorCpuReadingInterval = 1'000'000;

// glibc reports "no affinity in these attributes" as a mask with every bit set.
// mask is left untouched without attributes (its cache line stays where it is).
bool read_attr_mask(const pthread_attr_t* attr, CpuMask& mask) {
    if (attr == nullptr) return false;
    mask.clear();
    if (pthread_attr_getaffinity_np(attr, CpuMask::kBytes,
                                    reinterpret_cast<cpu_set_t*>(mask.words)) != 0)
        return false;
    bool all = true;
    for (auto w : mask.words) all = all && w == ~0ull;
    if (all) return false;
    mask.used_words = CpuMask::kWords;
    mask.valid = true;
    return true;
}

// CPU time (user + system) of a getrusage result, in ns.
std::int64_t cpu_ns_of(const struct rusage& ru) {
    return (microseconds(ru.ru_utime) + microseconds(ru.ru_stime)) * 1000;
}

// Whether to read a thread's wait for a CPU: only for a thread that lived at
// least 100 ms and ran under half that time (the analyzer needs the wait
// only for flows under a tenth of a CPU). The read is not free: in a thread
// that just started it took 24-37 us, and the thread's exit (whose procfs
// entries the read created) took 35-70 us longer on an idle 2-CPU VM and
// about 1.3 ms longer with both CPUs busy. Paid by every thread, it made a
// create+join of an empty thread ten times dearer; paid by threads of 100 ms
// or more it is under 0.1 % of their life on an idle machine. Shorter
// threads are classified by their context switches.
// \param cpu_ns the thread's CPU time; -1 when unknown.
bool run_delay_is_wanted(std::int64_t cpu_ns, std::uint64_t start_ns, std::uint64_t end_ns) {
    constexpr std::uint64_t kShortestLife = 100'000'000;
    if (start_ns == 0) return true;  // not started under our eyes: its length is unknown
    if (end_ns <= start_ns || end_ns - start_ns < kShortestLife) return false;
    return cpu_ns < 0 || static_cast<std::uint64_t>(cpu_ns) < (end_ns - start_ns) / 2;
}

// Threads that lived less than this skip the end-of-life mask re-read and
// getrusage (docs/event-log.md, thread_end): two system calls that cost
// about 0.5 us on the development VM, where an empty thread's create+join
// costs 11-17 us (docs/PERFORMANCE.md). Nothing is lost the analyzer uses:
// it counts flows under 20 ms as active whatever their CPU time
// (ActivityOptions::min_lifetime_ns), a mask change through an intercepted
// call is in its own affinity line, and one behind our back within a
// millisecond of a thread's start is the one case left unseen.
// The same millisecond within which a thread's start and end are one line.
constexpr std::uint64_t kShortThreadNs = kStartLineDelayNs;

void write_thread_end(const char* how) {
    ThreadState& t = this_thread();
    if (t.ended) return;
    t.ended = true;
    sampling_thread_end();  // drains and closes this thread's events while it still exists
    RecorderScope scope;
    start_writer_thread_ending();
    unregister_thread(static_cast<std::uintptr_t>(pthread_self()));
    const std::uint64_t end_ns = monotonic_ns();
    follow_unseen_child();  // as begin_line, which its own lines skip
    if (Launch* l = t.launch) {
        t.launch = nullptr;
        if (write_start_at_end(*l, t.launch_use, {how, end_ns})) return;  // its one line, start and end
    }
    const bool short_lived = t.start_ns != 0 && end_ns - t.start_ns < kShortThreadNs;
    CpuMask mask;
    struct rusage ru{};
    bool have_usage = false;
    if (!short_lived) {
        mask.read_thread(0);
        have_usage = raw::getrusage(RUSAGE_THREAD, &ru) == 0;
    }
    namespace end = event_schema::thread_end;
    // Names no other thread: no pending start needs to come first.
    write_event_as(end::event, current_tid(), end_ns, /*may_lock=*/true, [&](JsonLine& line) {
        line.field(end::how, how);
        if (t.traced) line.field_u(end::seq, t.seq);
        if (short_lived)
            line.field_bool(end::short_lived, true);
        else
            line.field_mask(end::cpuset, mask);
        line.field(end::cpu, static_cast<std::int64_t>(sched_getcpu()));
        if (have_usage) {
            line.field(end::utime_us, microseconds(ru.ru_utime));
            line.field(end::stime_us, microseconds(ru.ru_stime));
            line.field(end::nvcsw, static_cast<std::int64_t>(ru.ru_nvcsw));
            line.field(end::nivcsw, static_cast<std::int64_t>(ru.ru_nivcsw));
        }
        if (t.start_ns != 0) line.field_u(end::duration_ns, end_ns - t.start_ns);
        // How long it waited for a CPU: it tells a starved thread from an
        // idle one (analysis/activity.hpp).
        if (run_delay_is_wanted(have_usage ? cpu_ns_of(ru) : -1, t.start_ns, end_ns))
            if (const SchedWait waited = read_sched_wait(0); waited.run_delay_ns >= 0) {
                line.field(end::run_delay_ns, waited.run_delay_ns);
                line.field(end::run_slices, waited.slices);
            }
    });
}

// For the walk over the live threads at exit.
struct LiveThreadWalk {
    std::uint64_t now_ns = 0;
    int own_tid = 0;
    // Reads of the wait for a CPU left: each costs about 20 us here and
    // leaves procfs entries the kernel removes at teardown (a few ms per
    // process in all: docs/PERFORMANCE.md), so a process with thousands of
    // idle threads stops paying after these; the rest are classified by
    // CPU time alone.
    int run_delay_reads_left = 256;
    std::uint64_t latest_start_ns = 0;  // of the live threads other than the caller
};

void write_live_thread_usage(int tid, std::uint64_t start_ns, void* context) {
    auto& walk = *static_cast<LiveThreadWalk*>(context);
    // Recorder threads are started untraced and never registered here; the
    // check keeps it so should one ever go through the traced path.
    if (is_recorder_thread(tid)) return;
    const std::int64_t cpu_ns = read_thread_cpu_ns(tid == walk.own_tid ? 0 : tid);
    if (cpu_ns < 0) return;  // ended meanwhile: its thread_end says it all
    if (tid != walk.own_tid && start_ns > walk.latest_start_ns) walk.latest_start_ns = start_ns;
    SchedWait waited;
    if (walk.run_delay_reads_left > 0 && run_delay_is_wanted(cpu_ns, start_ns, walk.now_ns)) {
        --walk.run_delay_reads_left;
        waited = read_sched_wait(tid == walk.own_tid ? 0 : tid);
    }
    // A small line of its own (not write_event): exit may be called from a
    // signal handler, where the shared big buffer's lock must not be taken.
    namespace usage = event_schema::thread_usage_at_exit;
    char buf[256];
    JsonLine line(buf, sizeof buf);
    begin_event(line, usage::event);
    line.field(usage::target_tid, static_cast<std::int64_t>(tid));
    line.field(usage::cpu_us, cpu_ns / 1000);
    if (start_ns != 0 && walk.now_ns > start_ns) line.field_u(usage::duration_ns, walk.now_ns - start_ns);
    if (waited.run_delay_ns >= 0) {
        line.field(usage::run_delay_ns, waited.run_delay_ns);
        line.field(usage::run_slices, waited.slices);
    }
    emit(line, usage::event);
}

}  // namespace

std::uint64_t write_usage_of_live_threads() {
    LiveThreadWalk walk;
    walk.now_ns = monotonic_ns();
    walk.own_tid = current_tid();
    for_each_registered_thread(&write_live_thread_usage, &walk);
    return walk.latest_start_ns;
}

}  // namespace stacksage::preload

using namespace stacksage::preload;

extern "C" void stacksage_thread_begin(void* launch, void* (**start)(void*), void** arg) {
    auto* l = static_cast<Launch*>(launch);
    ThreadState& t = this_thread();
    t.tid = read_own_tid();
    t.traced = true;
    t.ended = false;
    t.exiting = false;
    t.start_ns = monotonic_ns();
    *start = l->start;
    *arg = l->arg;
    t.seq = process().thread_seq.fetch_add(1, std::memory_order_relaxed) + 1;
    const auto self = static_cast<std::uintptr_t>(pthread_self());
    if (process().state.load(std::memory_order_acquire) == static_cast<int>(TracerState::Ready)) {
        RecorderScope scope;
        // The mask it inherited, as its creator knew it; read from the kernel
        // when the attributes set one (the kernel intersects it with the
        // cgroup's cpuset) or an affinity call came in between.
        if (!l->start_mask.valid || l->mask_generation != affinity_generation()) {
            l->mask_generation = affinity_generation();
            l->start_mask.read_thread(0);
        }
        remember_own_mask(l->start_mask, l->mask_generation);
        // The start's fields, stored: its line is written at its end, by the
        // start-line writer or before another line (thread_launch.hpp).
        l->tid = t.tid;
        l->seq = t.seq;
        l->pthread = self;
        l->start_cpu = sched_getcpu();
        l->start_ns.store(t.start_ns, std::memory_order_relaxed);
        t.launch = l;
        // Pending before it is registered: whoever finds its tid in the
        // registry and names it in a line writes its start first.
        t.launch_use = set_start_pending(*l);
    } else {
        release_launch(l);
    }
    register_thread(self, t.tid, t.start_ns);
    // Opened from inside the thread, so the events count this thread only.
    sampling_thread_begin();
}

extern "C" void stacksage_thread_end(int how) {
    ThreadState& t = this_thread();
    if (t.ended) return;
    // No getpid() check here (it would cost a system call per thread): only
    // the thread that called our fork() survives into a child, and that path
    // already switched the child to its own log.
    if (process().state.load(std::memory_order_acquire) != static_cast<int>(TracerState::Ready)) {
        t.ended = true;
        return;
    }
    if (how == STACKSAGE_END_RETURN)
        write_thread_end("return");
    else
        write_thread_end(t.exiting ? "pthread_exit" : "cancel");
}

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                    void* (*start)(void*), void* arg) {
    auto real_create = real::pthread_create();
    if (real_create == nullptr) return EAGAIN;
    if (!tracing_ready()) return real_create(thread, attr, start, arg);
    start_live_watcher_thread_once();  // a multi-threaded process may watch its node
    start_start_writer_once();

    const auto return_address = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    Launch* l = nullptr;
    {
        RecorderScope scope;
        l = acquire_launch();
        if (l == nullptr) {
            process().threads_untraced.fetch_add(1, std::memory_order_relaxed);
            return real_create(thread, attr, start, arg);
        }
        l->start = start;
        l->arg = arg;
        l->creator_tid = current_tid();
        l->create_ns = monotonic_ns();
        ThreadState& creator = this_thread();
        l->creator_cpu_ns = -1;
        if (l->create_ns >= creator.last_cpu_reading_ns + kCreatorCpuReadingInterval) {
            l->creator_cpu_ns = read_thread_cpu_ns(0);
            creator.last_cpu_reading_ns = l->create_ns;
        }
        // A return address points just past the call; look up the call itself.
        l->creator = creator_module(return_address - 1);
        l->start_module = modules().find(reinterpret_cast<std::uintptr_t>(start));
        l->attr_mask_given = read_attr_mask(attr, l->attr_mask);
        if (l->attr_mask_given)
            l->start_mask.clear();
        else
            l->mask_generation = own_mask(l->start_mask);
    }
    int rc = real_create(thread, attr, &stacksage_thread_trampoline, l);
    if (rc != 0) {
        release_launch(l);
        RecorderScope scope;
        char buf[512];
        JsonLine line(buf, sizeof buf);
        namespace failed = stacksage::event_schema::thread_create_failed;
        begin_event(line, failed::event);
        line.field(failed::error, static_cast<std::int64_t>(rc));
        emit(line, failed::event);
    }
    return rc;
}

STACKSAGE_EXPORT void pthread_exit(void* value) {
    ThreadState& t = this_thread();
    t.exiting = true;
    live_watcher_main_thread_leaving();
    start_writer_main_thread_leaving();
    if (!t.ended && tracing_ready() && is_recorded_process())
        write_thread_end("pthread_exit");
    auto real_exit = real::pthread_exit();
    if (real_exit != nullptr) real_exit(value);
    raw::syscall6(SYS_exit, 0);  // unreachable unless the next definition is missing
    __builtin_unreachable();
}

STACKSAGE_EXPORT int pthread_setname_np(pthread_t thread, const char* name) {
    auto real_setname = real::pthread_setname_np();
    if (real_setname == nullptr) return ENOSYS;
    int rc = real_setname(thread, name);
    if (rc != 0 || !tracing_ready()) return rc;
    RecorderScope scope;
    int target = pthread_equal(thread, pthread_self())
                     ? current_tid()
                     : find_thread_tid(static_cast<std::uintptr_t>(thread));
    char buf[512];
    JsonLine line(buf, sizeof buf);
    namespace naming = stacksage::event_schema::thread_name;
    begin_event(line, naming::event);
    line.field(naming::target_tid, static_cast<std::int64_t>(target));
    line.field_hex(naming::target_pthread, static_cast<std::uintptr_t>(thread));
    line.field(naming::name, name);
    emit(line, naming::event);
    return rc;
}
