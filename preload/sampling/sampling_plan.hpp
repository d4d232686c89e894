// Which sampling backends can work on this machine, how to open them, and,
// for each one that cannot, exactly why (in words a user can act on).
//
// The plan is a pure function of what sysfs lists (sysfs_pmu.hpp), the
// kernel settings and privileges (system_facts.hpp) and the options: PMU
// types and event encodings come from sysfs, never from tables of CPU
// models. Opening an event can still fail where the plan said yes (a
// hypervisor that lists a PMU it does not virtualise, another profiler
// holding IBS); perf_sampler.cpp then reports the kernel's answer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/sampling/backend.hpp"
#include "preload/sampling/pmu_event_encoding.hpp"
#include "preload/sampling/sampling_options.hpp"
#include "preload/sampling/sysfs_pmu.hpp"
#include "preload/sampling/system_facts.hpp"

namespace stacksage::sampling {

struct BackendStatus {
    bool available = false;
    char reason[512] = {};  // why not (empty when available)
};

// PEBS on one core PMU ("cpu", or each of "cpu_core"/"cpu_atom" on hybrids:
// a thread gets one event per PMU, each counting while it runs on that
// PMU's CPUs).
struct PebsTarget {
    char pmu[32] = {};
    int type = -1;
    EventEncoding loads;      // mem-loads with ldlat set
    EventEncoding stores;     // mem-stores, when has_stores
    EventEncoding loads_aux;  // mem-loads-aux, the group leader mem-loads needs (Sapphire Rapids and later)
    bool has_stores = false;
    bool has_loads_aux = false;
    int precise_ip = 2;       // from caps/max_precise when listed
};

struct IbsTarget {
    int type = -1;
    EventEncoding op;            // cnt_ctl (count dispatched ops) and swfilt when the PMU has them
    bool exclude_kernel = false; // only with swfilt: IBS otherwise rejects exclude_* bits
    bool count_ops = false;
};

struct SamplingPlan {
    BackendStatus status[kBackendCount];
    PebsTarget pebs[kMaxDescribedPmus];
    std::size_t pebs_count = 0;
    IbsTarget ibs;
    std::uint32_t ring_pages = 0;  // per thread: the metadata page plus the data pages
    std::uint32_t max_rings = 0;   // how many such rings the locked-memory budget holds

    const BackendStatus& of(Backend b) const { return status[static_cast<int>(b)]; }
    // Backends the selection asks for that are available.
    std::uint32_t usable(const BackendSelection& selection) const;
};

// papi_unavailable: nullptr when the PAPI probe found cache-miss counters,
// else its reason (papi_counters.hpp).
void plan_sampling(const PmuScan& pmus, const SystemFacts& facts, const SamplingOptions& options,
                   const char* papi_unavailable, SamplingPlan& out);

}  // namespace stacksage::sampling
