#include "preload/kept_proc_stat.hpp"

#include <fcntl.h>
#include <sys/syscall.h>

#include <atomic>

#include "preload/kept_descriptor.hpp"
#include "preload/node_file.hpp"
#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {

constexpr char kPath[] = "/proc/self/stat";

// Replaced only where no other thread reads (kept_proc_stat.hpp).
std::atomic<int> g_fd{-1};
long g_opened_by = 0;  // the pid whose stat it is
FileIdentity g_file;

long own_pid() { return raw::syscall6(SYS_getpid); }

}  // namespace

void keep_process_stat_open() {
    const int old = g_fd.exchange(-1);
    if (old >= 0 && g_file.held_by(old)) raw::close(old);
    const long fd = raw::openat(AT_FDCWD, kPath, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    const int high = move_to_high_fd(static_cast<int>(fd));
    g_file = FileIdentity::of(high);
    g_opened_by = own_pid();
    g_fd.store(high);
}

long read_process_stat(char* buf, std::size_t cap) {
    if (cap == 0) return -22;
    const int fd = g_fd.load();
    if (fd >= 0 && g_opened_by == own_pid() && g_file.held_by(fd)) {
        const long n = raw::pread(fd, buf, cap - 1, 0);
        if (n > 0) {
            buf[n] = '\0';
            return n;
        }
    }
    return raw::read_small_file(AT_FDCWD, kPath, buf, cap);
}

}  // namespace stacksage::preload
