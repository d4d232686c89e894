#include "preload/module_table.hpp"

#include <fcntl.h>
#include <link.h>
#include <sched.h>

#include <cstring>

#include "preload/json_line.hpp"
#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {

// Runtimes that only pass a thread creation through on someone's behalf.
bool is_pass_through_library(const char* path) {
    const char* base = std::strrchr(path, '/');
    base = base ? base + 1 : path;
    static const char* const kPrefixes[] = {
        "libc.so", "libc-", "libpthread.so", "libpthread-", "libstdc++.so", "ld-linux",
        "ld64.so", "libgcc_s.so", "libdl.so", "libstacksage-preload",
    };
    for (const char* p : kPrefixes)
        if (std::strncmp(base, p, std::strlen(p)) == 0) return true;
    return false;
}

// Per-thread cache of the last hits: a runtime creating its team calls from
// the same module again and again, so most lookups end here.
__attribute__((tls_model("initial-exec"))) thread_local const Module* tls_last_hit[2] = {};

bool contains(const Module* m, std::uintptr_t addr) {
    return m != nullptr && addr >= m->start && addr < m->end;
}

}  // namespace

// constinit: in .bss, usable before any constructor has run.
constinit ModuleTable g_modules;

ModuleTable& modules() { return g_modules; }

const Module* ModuleTable::find_no_refresh(std::uintptr_t addr) const {
    std::size_t n = count_.load(std::memory_order_acquire);
    for (std::size_t i = n; i-- > 0;)
        if (contains(&modules_[i], addr)) return &modules_[i];
    return nullptr;
}

const Module* ModuleTable::find(std::uintptr_t addr) {
    for (const Module* m : tls_last_hit)
        if (contains(m, addr)) return m;
    const Module* m = find_no_refresh(addr);
    if (m == nullptr) {
        refresh();
        m = find_no_refresh(addr);
    }
    if (m != nullptr) {
        tls_last_hit[1] = tls_last_hit[0];
        tls_last_hit[0] = m;
    }
    return m;
}

void ModuleTable::reset_after_fork() { refresh_lock_.store(0, std::memory_order_release); }

int ModuleTable::on_object(::dl_phdr_info* info, std::size_t, void* self_ptr) {
    auto* self = static_cast<ModuleTable*>(self_ptr);
    std::uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        std::uintptr_t s = info->dlpi_addr + ph.p_vaddr;
        if (s < lo) lo = s;
        if (s + ph.p_memsz > hi) hi = s + ph.p_memsz;
    }
    if (hi <= lo) return 0;

    // The main program has an empty name: ask the kernel for its path.
    char exe[4096];
    const char* name = info->dlpi_name;
    if (name == nullptr || name[0] == '\0') {
        long n = raw::readlinkat(AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
        exe[n > 0 ? n : 0] = '\0';
        name = exe;
    }

    std::size_t n = self->count_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
        const Module& m = self->modules_[i];
        if (m.start == lo && m.end == hi && std::strcmp(m.path, name) == 0) return 0;
    }
    std::size_t len = std::strlen(name);
    if (n >= kMaxModules || self->pool_used_ + len + 1 > kPoolBytes) return 1;
    char* stored = self->pool_ + self->pool_used_;
    std::memcpy(stored, name, len + 1);
    self->pool_used_ += len + 1;

    // Escaping can multiply the length by six (\u00XX); a path that does
    // not fit then is written escaped at each use instead.
    const char* json = nullptr;
    std::size_t json_len = 0;
    if (std::size_t room = kPoolBytes - self->pool_used_; room > 6 * len + 3) {
        JsonLine quoted(self->pool_ + self->pool_used_, room);
        quoted.str(stored, len);
        if (!quoted.overflowed()) {
            json = quoted.data();
            json_len = quoted.size();
            self->pool_used_ += json_len;
        }
    }

    Module& m = self->modules_[n];
    m.start = lo;
    m.end = hi;
    m.path = stored;
    m.json = json;
    m.json_len = json_len;
    m.skip = is_pass_through_library(stored);
    self->count_.store(n + 1, std::memory_order_release);  // publish the finished entry
    return 0;
}

void ModuleTable::refresh() {
    // A spin lock rather than a mutex: it can be reset in a forked child and
    // never calls into the interposed pthread functions.
    int expected = 0;
    while (!refresh_lock_.compare_exchange_weak(expected, 1, std::memory_order_acquire)) {
        expected = 0;
        sched_yield();
    }
    dl_iterate_phdr(&ModuleTable::on_object, this);
    refresh_lock_.store(0, std::memory_order_release);
}

}  // namespace stacksage::preload
