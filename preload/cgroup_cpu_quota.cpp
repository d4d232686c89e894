#include "preload/cgroup_cpu_quota.hpp"

#include <fcntl.h>

#include <cstring>

#include "preload/proc_cgroup.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

// Files of one hierarchy's layout.
struct Layout {
    int version;
    const char* quota_file;   // v1 cpu.cfs_quota_us, v2 cpu.max
    const char* period_file;  // v1 cpu.cfs_period_us; v2: nullptr (both numbers are in cpu.max)
};
constexpr Layout kV1{1, "cpu.cfs_quota_us", "cpu.cfs_period_us"};
constexpr Layout kV2{2, "cpu.max", nullptr};

bool readable(const char* dir, const char* file) {
    char full[1024];
    TextBuffer name(full, sizeof full);
    name.add(dir).add("/").add(file);
    if (name.truncated()) return false;
    char text[64];
    return raw::read_small_file(AT_FDCWD, full, text, sizeof text) >= 0;  // opened (may be empty)
}

long read_file(const char* mount, const char* cgroup, const char* file, char* out, std::size_t cap) {
    char full[2048];
    TextBuffer name(full, sizeof full);
    name.add(mount).add(cgroup);
    if (cgroup[0] != '\0' && cgroup[std::strlen(cgroup) - 1] != '/') name.add("/");
    name.add(file);
    if (name.truncated()) return -1;
    return raw::read_small_file(AT_FDCWD, full, out, cap);
}

// A non-negative decimal at p, then white space; false for "-1", "max" or junk.
bool number_at(const char*& p, std::int64_t& value) {
    std::uint64_t v = 0;
    if (!read_decimal(p, static_cast<std::uint64_t>(INT64_MAX), v)) return false;
    while (*p == ' ' || *p == '\n' || *p == '\t') ++p;
    value = static_cast<std::int64_t>(v);
    return true;
}

// The quota and period one cgroup sets; false when it sets none (v1 "-1",
// v2 "max"), or the files cannot be read.
bool level_quota(const char* mount, const char* cgroup, const Layout& layout, std::int64_t& quota,
                 std::int64_t& period) {
    char text[128];
    if (read_file(mount, cgroup, layout.quota_file, text, sizeof text) <= 0) return false;
    const char* p = text;
    if (!number_at(p, quota) || quota <= 0) return false;
    if (layout.period_file == nullptr) return number_at(p, period) && period > 0;  // "50000 100000"
    if (read_file(mount, cgroup, layout.period_file, text, sizeof text) <= 0) return false;
    p = text;
    return number_at(p, period) && period > 0;
}

// quota_a / period_a < quota_b / period_b, without division (the recorder
// links no libgcc helper for 128-bit division) and without overflow.
bool fewer_cpus(std::int64_t quota_a, std::int64_t period_a, std::int64_t quota_b, std::int64_t period_b) {
    using u128 = unsigned __int128;
    return static_cast<u128>(quota_a) * static_cast<u128>(period_b) <
           static_cast<u128>(quota_b) * static_cast<u128>(period_a);
}

// Walks from `cgroup` up to the hierarchy's root, keeping the smallest quota.
bool smallest_quota(const char* mount, const char* cgroup, const Layout& layout, CgroupCpuQuota& out) {
    char path[sizeof out.cgroup];
    // A path cut short could name another cgroup ("/job_12" of "/job_123").
    if (TextBuffer(path, sizeof path).add(cgroup).truncated() || path[0] != '/') return false;
    bool found = false;
    for (;;) {
        std::int64_t quota = 0, period = 0;
        if (level_quota(mount, path, layout, quota, period) &&
            (!found || fewer_cpus(quota, period, out.quota_us, out.period_us))) {
            out.quota_us = quota;
            out.period_us = period;
            TextBuffer(out.cgroup, sizeof out.cgroup).add(path);
            found = true;
        }
        if (path[1] == '\0') break;  // the root was the last
        char* slash = std::strrchr(path, '/');
        if (slash == path) path[1] = '\0';
        else *slash = '\0';
    }
    if (!found) return false;
    out.version = layout.version;
    TextBuffer(out.mount, sizeof out.mount).add(mount);
    char stat[1024];
    if (read_file(mount, out.cgroup, "cpu.stat", stat, sizeof stat) > 0) parse_cpu_stat(stat, out);
    return true;
}

}  // namespace

void parse_cpu_stat(const char* text, CgroupCpuQuota& out) {
    for (const char* line = text; line != nullptr && *line != '\0';) {
        const char* space = std::strchr(line, ' ');
        const char* end = std::strchr(line, '\n');
        if (space != nullptr && (end == nullptr || space < end)) {
            const std::size_t key_len = static_cast<std::size_t>(space - line);
            const char* p = space + 1;
            std::int64_t value = 0;
            if (number_at(p, value)) {
                auto is = [&](const char* key) {
                    return std::strlen(key) == key_len && std::memcmp(line, key, key_len) == 0;
                };
                if (is("nr_periods")) out.periods = value;
                else if (is("nr_throttled")) out.throttled = value;
                else if (is("throttled_time")) out.throttled_ns = value;
                else if (is("throttled_usec")) out.throttled_ns = value > INT64_MAX / 1000 ? INT64_MAX : value * 1000;
            }
        }
        line = end ? end + 1 : nullptr;
    }
}

bool read_cgroup_cpu_quota_at(const char* fs_root, char* proc_cgroup, CgroupCpuQuota& out) {
    out = CgroupCpuQuota{};
    const CgroupPlacement placement = parse_proc_cgroup(proc_cgroup, "cpu");
    char mount[512];
    if (placement.v1_path != nullptr) {
        // Mounted under the controllers' names as /proc lists them
        // ("cpu,cpuacct", with cpu and cpuacct links beside it), or alone.
        const char* const dirs[] = {placement.v1_controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu"};
        for (const char* dir : dirs) {
            TextBuffer(mount, sizeof mount).add(fs_root).add("/").add(dir);
            if (readable(mount, kV1.period_file)) return smallest_quota(mount, placement.v1_path, kV1, out);
        }
    }
    if (placement.v2_path != nullptr) {
        // The v2 hierarchy is the root itself, or "unified" beside v1's controllers (hybrid).
        TextBuffer(mount, sizeof mount).add(fs_root);
        if (!readable(mount, "cgroup.controllers")) TextBuffer(mount, sizeof mount).add(fs_root).add("/unified");
        return smallest_quota(mount, placement.v2_path, kV2, out);
    }
    return false;
}

bool reread_cgroup_cpu_quota(CgroupCpuQuota& out) {
    if (out.has_quota() && out.mount[0] != '\0' && (out.version == 1 || out.version == 2)) {
        const Layout& layout = out.version == 1 ? kV1 : kV2;
        std::int64_t quota = 0, period = 0;
        if (level_quota(out.mount, out.cgroup, layout, quota, period)) {
            out.quota_us = quota;
            out.period_us = period;
            out.periods = out.throttled = out.throttled_ns = -1;
            char stat[1024];
            if (read_file(out.mount, out.cgroup, "cpu.stat", stat, sizeof stat) > 0) parse_cpu_stat(stat, out);
            return true;
        }
    }
    return read_cgroup_cpu_quota(out);
}

bool read_cgroup_cpu_quota(CgroupCpuQuota& out) {
    char cgroups[4096];
    if (raw::read_small_file(AT_FDCWD, "/proc/self/cgroup", cgroups, sizeof cgroups) <= 0) {
        out = CgroupCpuQuota{};
        return false;
    }
    return read_cgroup_cpu_quota_at("/sys/fs/cgroup", cgroups, out);
}

}  // namespace stacksage::preload
