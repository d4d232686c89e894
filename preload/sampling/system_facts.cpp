#include "preload/sampling/system_facts.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

constexpr int kCapIpcLock = 14;
constexpr int kCapSysAdmin = 21;
constexpr int kCapPerfmon = 38;

// Reads up to cap-1 bytes of a file; returns the length, or -1.
long read_file(const char* path, char* buf, std::size_t cap) {
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    std::size_t len = 0;
    while (len + 1 < cap) {
        const ssize_t n = ::read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        len += static_cast<std::size_t>(n);
    }
    ::close(fd);
    buf[len] = '\0';
    return static_cast<long>(len);
}

bool read_long(const char* path, long& out) {
    char buf[64];
    if (read_file(path, buf, sizeof buf) <= 0) return false;
    char* end = nullptr;
    const long v = std::strtol(buf, &end, 10);
    if (end == buf) return false;
    out = v;
    return true;
}

// The rest of the line after "key" at the start of a line, or nullptr.
const char* line_value(const char* text, const char* key) {
    const std::size_t n = std::strlen(key);
    for (const char* p = text; p && *p; p = std::strchr(p, '\n') ? std::strchr(p, '\n') + 1 : nullptr)
        if (std::strncmp(p, key, n) == 0) return p + n;
    return nullptr;
}

}  // namespace

void read_system_facts(const char* proc_root, SystemFacts& out) {
    out = SystemFacts{};
    const char* root = proc_root ? proc_root : kDefaultProcRoot;
    char path[1024];
    long v;

    TextBuffer(path, sizeof path).add(root).add("/sys/kernel/perf_event_paranoid");
    if (read_long(path, v)) {
        out.perf_supported = true;
        out.paranoid = static_cast<int>(v);
    }
    TextBuffer(path, sizeof path).add(root).add("/sys/kernel/perf_event_mlock_kb");
    if (read_long(path, v)) out.mlock_kb = v;

    // Called once per process, before any thread samples: a static buffer
    // keeps 64 KiB off the (possibly small) stack.
    static char text[65536];
    long cpuinfo_len = -1;
    TextBuffer(path, sizeof path).add(root).add("/self/status");
    if (read_file(path, text, sizeof text) > 0) {
        if (const char* cap = line_value(text, "CapEff:")) {
            while (*cap == ' ' || *cap == '\t') ++cap;
            const std::uint64_t eff = std::strtoull(cap, nullptr, 16);
            out.cap_perfmon = (eff >> kCapPerfmon & 1) || (eff >> kCapSysAdmin & 1);
            out.cap_ipc_lock = eff >> kCapIpcLock & 1;
        }
    }
    TextBuffer(path, sizeof path).add(root).add("/self/limits");
    if (read_file(path, text, sizeof text) > 0) {
        if (const char* lim = line_value(text, "Max locked memory")) {
            while (*lim == ' ') ++lim;
            if (std::strncmp(lim, "unlimited", 9) == 0)
                out.memlock_limit = ~std::uint64_t{0};
            else
                out.memlock_limit = std::strtoull(lim, nullptr, 10);
        }
    }
    TextBuffer(path, sizeof path).add(root).add("/cpuinfo");
    cpuinfo_len = read_file(path, text, sizeof text);
    if (cpuinfo_len > 0) {
        unsigned processors = 0;
        for (const char* p = text; (p = line_value(p, "processor")) != nullptr; ++processors) {}
        // A cpuinfo longer than the buffer lists more CPUs than we counted.
        const bool complete = static_cast<std::size_t>(cpuinfo_len) + 1 < sizeof text;
        if (complete && processors > 0) out.online_cpus = processors;
        if (const char* vendor = line_value(text, "vendor_id")) {
            while (*vendor == ' ' || *vendor == '\t' || *vendor == ':') ++vendor;
            TextBuffer t(out.vendor, sizeof out.vendor);
            for (; *vendor && *vendor != '\n'; ++vendor) t.add_char(*vendor);
        }
        if (const char* flags = line_value(text, "flags")) {
            const char* eol = std::strchr(flags, '\n');
            for (const char* p = flags; (p = std::strstr(p, " hypervisor")) != nullptr; ++p) {
                if (eol && p > eol) break;
                if (p[11] == ' ' || p[11] == '\n' || p[11] == '\0') {
                    out.hypervisor = true;
                    break;
                }
            }
        }
    }
    if (out.online_cpus == 1 && cpuinfo_len + 1 >= static_cast<long>(sizeof text)) {
        const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
        if (n > 0) out.online_cpus = static_cast<unsigned>(n);
    }
    const long ps = ::sysconf(_SC_PAGESIZE);
    if (ps > 0) out.page_size = static_cast<unsigned>(ps);
}

std::uint32_t rings_within_mlock_budget(const SystemFacts& facts, std::uint32_t ring_pages) {
    if (ring_pages == 0) return 0;
    if (facts.cap_ipc_lock || facts.memlock_limit == ~std::uint64_t{0} || facts.paranoid < 0)
        return 0xffffffffu;
    const std::uint64_t kb_per_page = facts.page_size / 1024 ? facts.page_size / 1024 : 4;
    const std::uint64_t user_pool = static_cast<std::uint64_t>(facts.mlock_kb > 0 ? facts.mlock_kb : 0) /
                                    kb_per_page * facts.online_cpus;
    const std::uint64_t rlimit_pages = facts.memlock_limit / facts.page_size;
    const std::uint64_t rings = (user_pool + rlimit_pages) / ring_pages;
    return rings > 0xfffffffeu ? 0xfffffffeu : static_cast<std::uint32_t>(rings);
}

}  // namespace stacksage::sampling
