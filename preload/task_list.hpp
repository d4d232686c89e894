// The tasks (threads) of a process as the kernel lists them in
// /proc/PID/task, and a task's name. For the recorder's scans of its own
// process (the threads alive at an MPI snapshot, the threads it never saw
// created, at the end) and of the node's (the live watcher). Raw system
// calls and a buffer on the stack: async-signal-safe, no allocation.
#pragma once

#include <fcntl.h>

#include <climits>
#include <cstddef>
#include <cstdint>

#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

// Calls visit(tid) for each task listed in task_dir ("/proc/self/task",
// "/proc/PID/task"), in the kernel's order.
// \return false when the directory cannot be opened (the process is gone).
template <typename Visit>
bool for_each_task(const char* task_dir, Visit&& visit) {
    struct LinuxDirent64 {
        unsigned long long d_ino;
        long long d_off;
        unsigned short d_reclen;
        unsigned char d_type;
        char d_name[1];
    };
    const long dir = raw::openat(AT_FDCWD, task_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return false;
    alignas(8) char entries[2048];
    for (;;) {
        const long n = raw::getdents64(static_cast<int>(dir), entries, sizeof entries);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
            auto* d = reinterpret_cast<LinuxDirent64*>(entries + off);
            off += d->d_reclen;
            std::uint64_t number = 0;
            const char* p = d->d_name;
            if (!read_decimal(p, INT32_MAX, number)) continue;  // ".", ".."
            visit(static_cast<int>(number));
        }
    }
    raw::close(static_cast<int>(dir));
    return true;
}

// The name (comm) of a task of this process into name, without its newline.
// \return its length; 0 when it cannot be read (the task ended).
inline long read_task_name(int tid, char (&name)[64]) {
    char path[64];
    TextBuffer(path, sizeof path).add("/proc/self/task/").add_int(tid).add("/comm");
    long len = raw::read_small_file(AT_FDCWD, path, name, sizeof name);
    if (len > 0 && name[len - 1] == '\n') name[--len] = '\0';
    if (len <= 0) {
        name[0] = '\0';
        return 0;
    }
    return len;
}

}  // namespace stacksage::preload
