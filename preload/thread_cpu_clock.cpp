#include "preload/thread_cpu_clock.hpp"

#include <time.h>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {

// The kernel's encoding of a thread's CPU-time clock (include/linux/posix-timers.h:
// the tid inverted and shifted, CPUCLOCK_SCHED | CPUCLOCK_PERTHREAD_MASK);
// glibc's pthread_getcpuclockid builds the same id from the pthread_t.
constexpr long kPerThread = 4;
constexpr long kSchedClock = 2;

long thread_cpu_clock_id(int tid) {
    return static_cast<long>(static_cast<int>(~static_cast<unsigned>(tid) << 3)) | kPerThread | kSchedClock;
}

}  // namespace

std::int64_t read_thread_cpu_ns(int tid) {
    if (tid < 0) return -1;
    struct timespec ts{};
    const long clock = tid == 0 ? CLOCK_THREAD_CPUTIME_ID : thread_cpu_clock_id(tid);
    if (raw::syscall6(SYS_clock_gettime, clock, reinterpret_cast<long>(&ts)) != 0) return -1;
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace stacksage::preload
