// The CPU bandwidth a process's cgroups grant (a quota of CPU time per
// period: a batch system's or container's "0.5 CPU") and how often the
// kernel held the process's cgroup back for having used it up (throttling).
// A cpuset may offer 16 CPUs while a quota lets the job use 0.5 of one: the
// analyzer counts the smaller as the CPUs available.
//
// The quota is the smallest, in CPUs (quota / period), over the process's
// cgroup and every ancestor: each level limits all below it. cgroup v1's
// `cpu` controller (cpu.cfs_quota_us, cpu.cfs_period_us) is read where the
// machine mounts it, else cgroup v2 (cpu.max). The throttling counters
// (cpu.stat: nr_periods, nr_throttled, and throttled_time in ns (v1) or
// throttled_usec (v2)) are those of the cgroup that holds that quota: the
// kernel counts throttling where the quota is enforced.
//
// Raw system calls only, no allocation: the recorder reads it at each
// process's start and end (docs/event-log.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

struct CgroupCpuQuota {
    std::int64_t quota_us = -1;   // the smallest quota found; -1: no level sets one
    std::int64_t period_us = -1;  // its period
    // cpu.stat of the cgroup that holds the quota; -1 where unreadable.
    std::int64_t periods = -1;       // nr_periods: periods in which it had runnable threads
    std::int64_t throttled = -1;     // nr_throttled: periods in which it was held back
    std::int64_t throttled_ns = -1;  // throttled_time (v1) / throttled_usec x 1000 (v2)
    int version = 0;                 // 1 or 2: the hierarchy read; 0: none
    char cgroup[512] = {};           // the cgroup holding the quota ("/slurm/job_42"); "" when none
    char mount[256] = {};            // where its hierarchy is mounted ("/sys/fs/cgroup/cpu")

    bool has_quota() const { return quota_us > 0 && period_us > 0; }
};

// Reads the quota of the calling process from /proc/self/cgroup and /sys/fs/cgroup.
// \return true when a quota was found (out.has_quota()).
bool read_cgroup_cpu_quota(CgroupCpuQuota& out);

// The same from a given cgroup file system root (the folder that holds the
// v1 controllers' mounts, `cpu/` or `cpu,cpuacct/`, and `unified/`, or the v2
// hierarchy itself) and the text of a /proc/<pid>/cgroup: for tests on
// fixture trees. `proc_cgroup` is modified (split into lines).
bool read_cgroup_cpu_quota_at(const char* fs_root, char* proc_cgroup, CgroupCpuQuota& out);

// Reads again the quota and counters of the cgroup `out` names (found by a
// read_cgroup_cpu_quota before): 2 or 3 small files instead of the walk,
// for the process's end. Falls back to the whole walk when that cgroup no
// longer sets a quota.
bool reread_cgroup_cpu_quota(CgroupCpuQuota& out);

// Parses a cpu.stat text into out's counters (v1 throttled_time in ns, v2
// throttled_usec); counters the text lacks stay -1.
void parse_cpu_stat(const char* text, CgroupCpuQuota& out);

}  // namespace stacksage::preload
