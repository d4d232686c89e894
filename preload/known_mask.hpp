// The affinity mask a thread is known to have, without asking the kernel.
//
// A thread whose attributes carry no mask starts with its creator's mask
// (the kernel copies it at clone). Reading it again in the new thread
// (sched_getaffinity, 0.24 us on the development VM) was about a third of
// what the recorder added to a create+join; instead each thread keeps the
// mask it last read or was handed, and the creator hands its own to the new
// thread (docs/PERFORMANCE.md, Preload).
//
// Every intercepted affinity call (sched_setaffinity, pthread_setaffinity_np,
// syscall(SYS_sched_setaffinity)) bumps one process-wide generation before and
// after the real call, whatever thread it targets; a cached mask is used only
// while the generation it was read at is current. A change made behind the
// recorder's back (a raw system call, `taskset -p`, a cgroup's cpuset
// shrinking) is not seen here: thread_end's re-read (threads that lived long
// enough to have one) and the snapshots at MPI_Init and MPI_Finalize catch it.
#pragma once

#include <cstdint>

#include "preload/cpu_mask.hpp"

namespace stacksage::preload {

std::uint32_t affinity_generation();

// Marks the span of an affinity call: every cached mask is stale from its
// start until it is read again after its end.
class AffinityChangeScope {
public:
    AffinityChangeScope();
    ~AffinityChangeScope();
    AffinityChangeScope(const AffinityChangeScope&) = delete;
    AffinityChangeScope& operator=(const AffinityChangeScope&) = delete;
};

// The calling thread's mask into `out`, from the cache while it is current,
// else read (and cached). Returns the generation `out` is valid at; `out` is
// invalid when the read failed.
std::uint32_t own_mask(CpuMask& out);

// Records `mask` as the calling thread's own, valid since `generation`
// (loaded before the mask was read or handed over). Masks wider than the
// cache (over 512 CPUs) are not cached: they are read each time.
void remember_own_mask(const CpuMask& mask, std::uint32_t generation);

}  // namespace stacksage::preload
