#include "preload/sampling/sysfs_pmu.hpp"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

// Reads a small file into buf (NUL-terminated, trailing newline removed).
bool read_text(const char* path, char* buf, std::size_t cap) {
    if (cap == 0) return false;
    buf[0] = '\0';
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::size_t len = 0;
    while (len + 1 < cap) {
        const ssize_t n = ::read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += static_cast<std::size_t>(n);
    }
    ::close(fd);
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) --len;
    buf[len] = '\0';
    return true;
}

bool read_int(const char* path, long& out) {
    char buf[32];
    if (!read_text(path, buf, sizeof buf) || buf[0] == '\0') return false;
    char* end = nullptr;
    const long v = std::strtol(buf, &end, 10);
    if (end == buf || *end != '\0') return false;
    out = v;
    return true;
}

void path_of(char* out, std::size_t cap, const char* root, const char* pmu, const char* rest) {
    TextBuffer(out, cap).add(root).add("/").add(pmu).add("/").add(rest);
}

bool interesting(const char* name) {
    return std::strncmp(name, "cpu", 3) == 0 || std::strcmp(name, "ibs_op") == 0;
}

void read_formats(const char* root, PmuDescription& pmu) {
    char dir_path[1024];
    path_of(dir_path, sizeof dir_path, root, pmu.name, "format");
    DIR* dir = ::opendir(dir_path);
    if (dir == nullptr) return;
    while (dirent* e = ::readdir(dir)) {
        if (e->d_name[0] == '.' || pmu.format_count == kMaxPmuFormats) continue;
        if (std::strlen(e->d_name) >= sizeof pmu.formats[0].name) continue;
        char file[1280], text[128];
        TextBuffer(file, sizeof file).add(dir_path).add("/").add(e->d_name);
        NamedFormat& f = pmu.formats[pmu.format_count];
        if (!read_text(file, text, sizeof text) || !parse_format_spec(text, f.spec)) continue;
        TextBuffer(f.name, sizeof f.name).add(e->d_name);
        ++pmu.format_count;
    }
    ::closedir(dir);
}

void describe(const char* root, PmuDescription& pmu) {
    char path[1024];
    long v;
    path_of(path, sizeof path, root, pmu.name, "type");
    if (read_int(path, v)) pmu.type = static_cast<int>(v);
    path_of(path, sizeof path, root, pmu.name, "cpus");
    read_text(path, pmu.cpus, sizeof pmu.cpus);
    read_formats(root, pmu);
    path_of(path, sizeof path, root, pmu.name, "events/mem-loads");
    read_text(path, pmu.mem_loads, sizeof pmu.mem_loads);
    path_of(path, sizeof path, root, pmu.name, "events/mem-stores");
    read_text(path, pmu.mem_stores, sizeof pmu.mem_stores);
    path_of(path, sizeof path, root, pmu.name, "events/mem-loads-aux");
    read_text(path, pmu.mem_loads_aux, sizeof pmu.mem_loads_aux);
    path_of(path, sizeof path, root, pmu.name, "caps/max_precise");
    if (read_int(path, v)) pmu.max_precise = static_cast<int>(v);
    path_of(path, sizeof path, root, pmu.name, "caps/pmu_name");
    read_text(path, pmu.pmu_name, sizeof pmu.pmu_name);
    path_of(path, sizeof path, root, pmu.name, "caps/zen4_ibs_extensions");
    pmu.zen4_ibs_extensions = read_int(path, v) && v != 0;
}

}  // namespace

bool PmuDescription::is_core_pmu() const { return std::strncmp(name, "cpu", 3) == 0; }
bool PmuDescription::is_ibs_op() const { return std::strcmp(name, "ibs_op") == 0; }

const PmuDescription* PmuScan::find(const char* name) const {
    for (std::size_t i = 0; i < count; ++i)
        if (std::strcmp(pmus[i].name, name) == 0) return &pmus[i];
    return nullptr;
}

void scan_pmus(const char* root, PmuScan& out) {
    // Not `out = PmuScan{}`: that builds a 20 KiB temporary on the stack.
    std::memset(static_cast<void*>(&out), 0, sizeof out);
    TextBuffer(out.root, sizeof out.root).add(root ? root : kDefaultSysfsPmuRoot);
    DIR* dir = ::opendir(out.root);
    if (dir == nullptr) {
        out.root_errno = errno;
        return;
    }
    out.root_readable = true;
    while (dirent* e = ::readdir(dir)) {
        if (e->d_name[0] == '.') continue;
        ++out.total_pmus;
        if (!interesting(e->d_name) || out.count == kMaxDescribedPmus) continue;
        if (std::strlen(e->d_name) >= sizeof out.pmus[0].name) continue;
        PmuDescription& pmu = out.pmus[out.count++];
        pmu.type = -1;
        pmu.max_precise = -1;
        TextBuffer(pmu.name, sizeof pmu.name).add(e->d_name);
        describe(out.root, pmu);
    }
    ::closedir(dir);
    // readdir's order is the file system's; sort by name so that results
    // (and the PEBS plan built from them) do not depend on it.
    for (std::size_t i = 1; i < out.count; ++i)
        for (std::size_t j = i; j > 0 && std::strcmp(out.pmus[j - 1].name, out.pmus[j].name) > 0; --j) {
            PmuDescription tmp = out.pmus[j];
            out.pmus[j] = out.pmus[j - 1];
            out.pmus[j - 1] = tmp;
        }
}

}  // namespace stacksage::sampling
