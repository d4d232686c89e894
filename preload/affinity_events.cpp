// Affinity changes, whoever makes them: sched_setaffinity (glibc),
// pthread_setaffinity_np (glibc; does not go through sched_setaffinity) and
// the raw syscall(SYS_sched_setaffinity, ...) that LLVM and Intel OpenMP use.
// Each records the caller, the target thread, the mask before, the mask
// asked for and the mask the kernel actually applied (it intersects with the
// cgroup's cpuset).
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>

#include "preload/caller_module.hpp"
#include "preload/known_mask.hpp"
#include "preload/real_functions.hpp"
#include "preload/thread_registry.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// Is tid a thread of this process? (Affinity calls may target other
// processes.) tgkill with signal 0 only checks that the thread exists in our
// thread group: one cheap system call, no /proc lookup.
bool in_this_process(int tid) { return raw::tgkill(process().pid, tid, 0) == 0; }

// The calling thread's tid from the kernel, not the cached one: a raw clone
// thread shares its creator's thread-local state (issue 27: its
// sched_setaffinity(0) was recorded as the main thread's, which looked
// pinned). Affinity calls are rare: one system call each is affordable.
int caller_tid() { return static_cast<int>(raw::gettid()); }

struct AffinityCall {
    const char* api;
    int caller = 0;          // the calling thread, from the kernel
    int target_tid;          // -1 when unknown
    std::uintptr_t target_pthread = 0;  // pthread_setaffinity_np only
    std::uintptr_t return_address;
    CpuMask before;
    CpuMask requested;
};

void prepare(AffinityCall& call, const char* api, int target_tid, std::size_t size,
             const void* mask, std::uintptr_t return_address) {
    call.api = api;
    if (call.caller == 0) call.caller = caller_tid();
    call.target_tid = target_tid;
    call.return_address = return_address;
    if (target_tid > 0) call.before.read_thread(target_tid);
    call.requested.assign(mask, mask != nullptr ? size : 0);
}

void record(const AffinityCall& call, long rc, int error) {
    process().affinity_calls.fetch_add(1, std::memory_order_relaxed);
    namespace affinity = event_schema::affinity;
    char buf[4096];
    JsonLine line(buf, sizeof buf);
    begin_event(line, affinity::event, call.caller);
    line.field(affinity::api, call.api);
    line.field(affinity::target_tid, static_cast<std::int64_t>(call.target_tid));
    if (call.target_pthread != 0) line.field_hex(affinity::target_pthread, call.target_pthread);
    line.field_bool(affinity::target_is_caller, call.target_tid == call.caller);
    line.field_bool(affinity::target_in_process,
                    call.target_tid > 0 && in_this_process(call.target_tid));
    const Module* caller = creator_module(call.return_address - 1);
    line.key(affinity::caller_module);
    if (caller != nullptr)
        line.str(caller->path);
    else
        line.null();
    // Affinity changes are rare: the whole chain of modules is affordable
    // and tells e.g. libhwloc called on behalf of libopen-pal.
    const Module* chain[8];
    int n = module_chain(chain, 8);
    line.key(affinity::callers);
    line.open_array();
    for (int i = 0; i < n; ++i) line.str(chain[i]->path);
    line.close_array();
    line.field_mask(affinity::old_cpuset, call.before);
    line.field_mask(affinity::requested_cpuset, call.requested);
    CpuMask after;
    if (call.target_tid > 0) after.read_thread(call.target_tid);
    line.field_mask(affinity::cpuset, after);
    line.field(affinity::rc, static_cast<std::int64_t>(rc));
    if (rc != 0) line.field(affinity::errno_, static_cast<std::int64_t>(error));
    emit(line, affinity::event);
}

}  // namespace

// syscall(SYS_execve / SYS_execveat, ...): the exec event, as for execve
// (process_events.cpp).
long traced_exec_syscall(long number, long a1, long a2, long a3, long a4, long a5);

}  // namespace stacksage::preload

using namespace stacksage::preload;

#define STACKSAGE_EXPORT extern "C" __attribute__((visibility("default")))

STACKSAGE_EXPORT int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t* mask) {
    AffinityChangeScope change;  // traced or not: cached masks go stale
    auto real_set = real::sched_setaffinity();
    if (real_set == nullptr || !tracing_ready()) {
        if (real_set != nullptr) return real_set(pid, size, mask);
        long rc = raw::syscall6(SYS_sched_setaffinity, pid, static_cast<long>(size),
                                reinterpret_cast<long>(mask));
        if (rc < 0) {
            errno = static_cast<int>(-rc);
            return -1;
        }
        return 0;
    }
    const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    AffinityCall call;
    {
        RecorderScope scope;
        call.caller = caller_tid();
        prepare(call, "sched_setaffinity", pid == 0 ? call.caller : pid, size, mask, ra);
    }
    int rc = real_set(pid, size, mask);
    int saved = errno;
    {
        RecorderScope scope;
        record(call, rc, saved);
    }
    errno = saved;
    return rc;
}

STACKSAGE_EXPORT int pthread_setaffinity_np(pthread_t thread, size_t size, const cpu_set_t* mask) {
    AffinityChangeScope change;
    auto real_set = real::pthread_setaffinity_np();
    if (real_set == nullptr) return ENOSYS;
    if (!tracing_ready()) return real_set(thread, size, mask);
    const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    AffinityCall call;
    {
        RecorderScope scope;
        call.caller = caller_tid();
        int target = pthread_equal(thread, pthread_self())
                         ? call.caller
                         : find_thread_tid(static_cast<std::uintptr_t>(thread));
        prepare(call, "pthread_setaffinity_np", target, size, mask, ra);
        call.target_pthread = static_cast<std::uintptr_t>(thread);
    }
    int rc = real_set(thread, size, mask);
    {
        RecorderScope scope;
        record(call, rc, rc);  // returns the error number instead of setting errno
    }
    return rc;
}

// syscall(2) is variadic; every Linux system call takes at most six
// word-sized arguments, so reading six and passing them on forwards any call
// (glibc's own syscall() does the same). Anything but sched_setaffinity goes
// straight through: libomp calls futex this way in its hot loops.
STACKSAGE_EXPORT long syscall(long number, ...) {
    va_list ap;
    va_start(ap, number);
    long a1 = va_arg(ap, long);
    long a2 = va_arg(ap, long);
    long a3 = va_arg(ap, long);
    long a4 = va_arg(ap, long);
    long a5 = va_arg(ap, long);
    long a6 = va_arg(ap, long);
    va_end(ap);
    auto real_syscall = real::syscall();
    auto pass_through = [&]() -> long {
        if (real_syscall != nullptr) return real_syscall(number, a1, a2, a3, a4, a5, a6);
        long rc = raw::syscall6(number, a1, a2, a3, a4, a5, a6);
        if (rc < 0 && rc > -4096) {
            errno = static_cast<int>(-rc);
            return -1;
        }
        return rc;
    };
    if (number == SYS_execve || number == SYS_execveat) return traced_exec_syscall(number, a1, a2, a3, a4, a5);
    if (number != SYS_sched_setaffinity) return pass_through();
    AffinityChangeScope change;  // traced or not: cached masks go stale
    if (real_syscall == nullptr || !tracing_ready()) return pass_through();
    const auto ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    AffinityCall call;
    {
        RecorderScope scope;
        int pid = static_cast<int>(a1);
        call.caller = caller_tid();
        prepare(call, "syscall", pid == 0 ? call.caller : pid, static_cast<std::size_t>(a2),
                reinterpret_cast<const void*>(a3), ra);
    }
    long rc = real_syscall(number, a1, a2, a3, a4, a5, a6);
    int saved = errno;
    {
        RecorderScope scope;
        record(call, rc, saved);
    }
    errno = saved;
    return rc;
}
