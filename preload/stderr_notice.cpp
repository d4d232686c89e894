#include "preload/stderr_notice.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cstdint>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {
constinit std::atomic<bool> g_used{false};

// Which file fd 2 was at start. kUnknown until remember_stderr() ran (a
// notice before it, from the earliest start-up, takes fd 2 as it finds it).
enum StderrAtStart : int { kUnknown, kClosed, kKnown };
constinit std::atomic<int> g_stderr_at_start{kUnknown};
constinit std::atomic<std::uint64_t> g_stderr_dev{0};
constinit std::atomic<std::uint64_t> g_stderr_ino{0};

bool is_stderr_from_start() {
    const int at_start = g_stderr_at_start.load(std::memory_order_acquire);
    if (at_start == kClosed) return false;
    struct stat st {};
    if (raw::fstat(2, &st) != 0) return false;
    if (at_start == kUnknown) return true;
    return st.st_dev == g_stderr_dev.load(std::memory_order_relaxed) &&
           st.st_ino == g_stderr_ino.load(std::memory_order_relaxed);
}
}  // namespace

void remember_stderr() {
    struct stat st {};
    if (raw::fstat(2, &st) != 0) {
        g_stderr_at_start.store(kClosed, std::memory_order_release);
        return;
    }
    g_stderr_dev.store(st.st_dev, std::memory_order_relaxed);
    g_stderr_ino.store(st.st_ino, std::memory_order_relaxed);
    g_stderr_at_start.store(kKnown, std::memory_order_release);
}

bool tell_stderr_once(const char* line, std::size_t len) {
    if (!is_stderr_from_start()) return false;
    if (g_used.exchange(true, std::memory_order_acq_rel)) return false;
    raw::write_all(2, line, len);
    return true;
}

bool stderr_notice_used() { return g_used.load(std::memory_order_acquire); }

// The same destination as tell_stderr_once, without its once-per-process
// limit: never into a file the application put at fd 2 since.
void tell_stderr(const char* line, std::size_t len) {
    if (!is_stderr_from_start()) return;
    raw::write_all(2, line, len);
}

}  // namespace stacksage::preload
