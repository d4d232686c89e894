// The CPUs the process's cgroup allows (what a batch system or container
// granted), read from cgroup v2's cpuset.cpus.effective or v1's
// cpuset.effective_cpus. A launcher may bind more narrowly inside it; the
// difference is what the analyzer explains.
#pragma once

#include <cstddef>

namespace stacksage::preload {

// Writes the kernel's list form ("0-15") NUL-terminated; returns its length,
// 0 when no cpuset controller is visible.
std::size_t read_cgroup_cpuset(char* out, std::size_t cap);

// /sys/devices/system/cpu/online, same form; 0 when unreadable.
std::size_t read_online_cpus(char* out, std::size_t cap);

}  // namespace stacksage::preload
