#include "preload/stderr_notice.hpp"

#include <atomic>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {
constinit std::atomic<bool> g_used{false};
}  // namespace

bool tell_stderr_once(const char* line, std::size_t len) {
    if (g_used.exchange(true, std::memory_order_acq_rel)) return false;
    raw::write_all(2, line, len);
    return true;
}

bool stderr_notice_used() { return g_used.load(std::memory_order_acquire); }

// The same destination as tell_stderr_once, without its once-per-process
// limit. (Where tell_stderr_once checks that fd 2 is still the standard
// error of the start, this must check the same.)
void tell_stderr(const char* line, std::size_t len) { raw::write_all(2, line, len); }

}  // namespace stacksage::preload
