#include "preload/thread_snapshot.hpp"

#include <fcntl.h>

#include "core/formats/event_schema.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {
struct LinuxDirent64 {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};
}  // namespace

void add_thread_snapshot(JsonLine& line) {
    // A recorder thread still starting has no tid in the registry yet.
    wait_for_starting_recorder_threads();
    namespace snapshot = event_schema::mpi_snapshot;
    line.key(snapshot::threads);
    line.open_array();
    long dir = raw::openat(AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        line.close_array();
        return;
    }
    alignas(8) char entries[4096];
    for (;;) {
        long n = raw::getdents64(static_cast<int>(dir), entries, sizeof entries);
        if (n <= 0) break;
        for (long off = 0; off < n;) {
            auto* d = reinterpret_cast<LinuxDirent64*>(entries + off);
            off += d->d_reclen;
            std::uint64_t number = 0;
            const char* p = d->d_name;
            if (!read_decimal(p, INT32_MAX, number)) continue;  // ".", ".."
            const int tid = static_cast<int>(number);
            if (is_recorder_thread(tid)) continue;  // the recorder's own (the drain thread): not the application's
            char path[64];
            TextBuffer(path, sizeof path).add("/proc/self/task/").add_int(tid).add("/comm");
            char name[64];
            long len = raw::read_small_file(AT_FDCWD, path, name, sizeof name);
            if (len > 0 && name[len - 1] == '\n') name[--len] = '\0';
            // A recorder thread named by its creator that has not run yet to register (the live watcher's).
            if (len > 0 && has_recorder_thread_name(name, static_cast<std::size_t>(len))) continue;
            line.open_object();
            line.field(snapshot::thread::tid, static_cast<std::int64_t>(tid));
            if (len > 0) line.field(snapshot::thread::name, name);
            CpuMask mask;
            mask.read_thread(tid);
            line.field_mask(snapshot::thread::cpuset, mask);
            line.close_object();
        }
    }
    raw::close(static_cast<int>(dir));
    line.close_array();
}

}  // namespace stacksage::preload
