#include "preload/cgroup_cpuset.hpp"

#include <fcntl.h>

#include <cstring>

#include "preload/proc_cgroup.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

std::size_t read_trimmed(const char* path, char* out, std::size_t cap) {
    long n = raw::read_small_file(AT_FDCWD, path, out, cap);
    if (n <= 0) {
        if (cap > 0) out[0] = '\0';
        return 0;
    }
    std::size_t len = static_cast<std::size_t>(n);
    while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == ' ')) out[--len] = '\0';
    return len;
}

// Tries <root><path>/<file>, then each parent of path: the effective set is
// only exposed where the controller is enabled.
std::size_t read_up_the_tree(const char* root, char* path, const char* file, char* out,
                             std::size_t cap) {
    for (;;) {
        char full[4096];
        TextBuffer(full, sizeof full).add(root).add(path).add("/").add(file);
        std::size_t n = read_trimmed(full, out, cap);
        if (n > 0) return n;
        char* slash = std::strrchr(path, '/');
        if (slash == nullptr) return 0;
        if (slash == path) {
            if (path[1] == '\0') return 0;
            path[1] = '\0';  // try the root cgroup last
        } else {
            *slash = '\0';
        }
    }
}

}  // namespace

std::size_t read_cgroup_cpuset(char* out, std::size_t cap) {
    char cgroups[4096];
    if (raw::read_small_file(AT_FDCWD, "/proc/self/cgroup", cgroups, sizeof cgroups) <= 0)
        return 0;
    const CgroupPlacement placement = parse_proc_cgroup(cgroups, "cpuset");
    // Copies: read_up_the_tree() shortens the path as it climbs.
    char v1_path[2048] = {};
    char v2_path[2048] = {};
    if (placement.v1_path != nullptr) TextBuffer(v1_path, sizeof v1_path).add(placement.v1_path);
    if (placement.v2_path != nullptr) TextBuffer(v2_path, sizeof v2_path).add(placement.v2_path);
    if (v1_path[0] == '/') {
        std::size_t n = read_up_the_tree("/sys/fs/cgroup/cpuset", v1_path,
                                         "cpuset.effective_cpus", out, cap);
        if (n > 0) return n;
    }
    if (v2_path[0] == '/')
        return read_up_the_tree("/sys/fs/cgroup", v2_path, "cpuset.cpus.effective", out, cap);
    return 0;
}

std::size_t read_online_cpus(char* out, std::size_t cap) {
    return read_trimmed("/sys/devices/system/cpu/online", out, cap);
}

}  // namespace stacksage::preload
