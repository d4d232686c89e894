// Waits the recorder sees: pthread_join and its timed variants.
//
// A main thread that computes alone, then starts one worker per core and
// waits for them in pthread_join is the most common pthreads pattern. Over
// its whole life it looks busy (it computed), so without its waits the
// analyzer would count it as load next to its workers and report a core too
// many. A `join` line gives the wait's bounds and the waiter's CPU time, so
// that activity is decided per interval (analysis/activity.hpp).
//
// Cost: a join whose thread had already ended, or ended within
// kShortestRecordedWait, writes nothing: two clock reads through the vDSO
// (tens of ns) are all it pays. A longer wait pays one CPU-clock read and one
// line, against a wait of a millisecond or more.
#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "preload/real_functions.hpp"
#include "preload/thread_cpu_clock.hpp"
#include "preload/thread_registry.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// Shorter waits change nothing the analyzer can see (its load sweep works
// at the scale of scheduler time slices and more).
constexpr std::uint64_t kShortestRecordedWait = 1'000'000;

// Records a wait of the calling thread for `thread` that began at begin_ns.
void record_join(const char* api, pthread_t thread, int target_tid, std::uint64_t begin_ns, int rc) {
    const std::uint64_t end_ns = monotonic_ns();
    if (end_ns < begin_ns + kShortestRecordedWait) return;
    RecorderScope scope;
    const std::int64_t cpu_ns = read_thread_cpu_ns(0);
    namespace join = event_schema::join;
    write_event(join::event, [&](JsonLine& line) {
        line.field(join::api, api);
        line.field_hex(join::target_pthread, static_cast<std::uintptr_t>(thread));
        if (target_tid > 0) line.field(join::target_tid, static_cast<std::int64_t>(target_tid));
        line.field_u(join::begin_t, begin_ns);
        if (cpu_ns >= 0) line.field(join::cpu_ns, cpu_ns);
        line.field(join::rc, static_cast<std::int64_t>(rc));
    });
}

// The joined thread's tid while it still runs; 0 when it had ended already:
// the reader then finds it by its handle. Read from glibc's descriptor of
// the thread (a line the creator's clone wrote) rather than the registry,
// whose slot the new thread wrote on another core: every join pays this,
// and a cache line fetched from another core is most of its cost.
int tid_of(pthread_t thread) {
    if (const int tid = tid_in_descriptor(thread); tid >= 0) return tid;
    if (!tracing_ready()) return 0;
    RecorderScope scope;
    const int tid = find_thread_tid(static_cast<std::uintptr_t>(thread));
    return tid > 0 ? tid : 0;
}

// One interposed join (`api`): the real call, and its wait recorded when it
// lasted. Inlined into each interposer: the join is on the create+join path
// the recorder's cost is measured on (docs/PERFORMANCE.md).
template <class RealJoin, class... Rest>
__attribute__((always_inline)) inline int traced_join(const char* api, RealJoin real_join, pthread_t thread,
                                                      void** value, Rest... rest) {
    if (real_join == nullptr) return ENOSYS;
    if (inside_recorder() || !tracing_ready()) return real_join(thread, value, rest...);
    const int target = tid_of(thread);
    const std::uint64_t begin = monotonic_ns();
    const int rc = real_join(thread, value, rest...);
    record_join(api, thread, target, begin, rc);
    return rc;
}

}  // namespace

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int pthread_join(pthread_t thread, void** value) {
    return traced_join("pthread_join", real::pthread_join(), thread, value);
}

STACKSAGE_EXPORT int pthread_timedjoin_np(pthread_t thread, void** value, const struct timespec* abstime) {
    return traced_join("pthread_timedjoin_np", real::pthread_timedjoin_np(), thread, value, abstime);
}

STACKSAGE_EXPORT int pthread_clockjoin_np(pthread_t thread, void** value, clockid_t clock,
                                          const struct timespec* abstime) {
    return traced_join("pthread_clockjoin_np", real::pthread_clockjoin_np(), thread, value, clock, abstime);
}
