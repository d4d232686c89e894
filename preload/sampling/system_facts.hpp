// The kernel settings and privileges that decide whether this process may
// sample: perf_event_paranoid, the locked-memory budget for ring buffers,
// effective capabilities, and whether we run under a hypervisor.
//
// Read from a procfs root (tests point it at fixture directories).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

inline constexpr const char* kDefaultProcRoot = "/proc";

struct SystemFacts {
    bool perf_supported = false;   // <proc>/sys/kernel/perf_event_paranoid exists
    int paranoid = 2;              // its value
    long mlock_kb = 516;           // <proc>/sys/kernel/perf_event_mlock_kb: per-user ring budget, per CPU
    std::uint64_t memlock_limit = 0;  // RLIMIT_MEMLOCK (soft), bytes; UINT64_MAX: unlimited
    bool cap_perfmon = false;      // CAP_PERFMON or CAP_SYS_ADMIN effective: paranoid does not apply
    bool cap_ipc_lock = false;     // CAP_IPC_LOCK effective: the locked-memory limit does not apply
    bool hypervisor = false;       // the "hypervisor" CPU flag
    char vendor[16] = {};          // "GenuineIntel", "AuthenticAMD", ...
    unsigned online_cpus = 1;
    unsigned page_size = 4096;
};

// Reads <root>/sys/kernel/perf_event_{paranoid,mlock_kb}, <root>/self/status
// (CapEff), <root>/self/limits ("Max locked memory") and <root>/cpuinfo.
// Missing files leave the defaults above (perf_supported stays false only
// when the paranoid file is missing).
void read_system_facts(const char* proc_root, SystemFacts& out);

// How many ring buffers of ring_pages pages (metadata page included) the
// locked-memory budget holds for one process: the per-user pool
// (mlock_kb x CPUs, shared by all of the user's processes) plus the
// process's RLIMIT_MEMLOCK, as the kernel charges them. UINT32_MAX when
// unlimited (CAP_IPC_LOCK, or unlimited rlimit).
std::uint32_t rings_within_mlock_budget(const SystemFacts& facts, std::uint32_t ring_pages);

}  // namespace stacksage::sampling
