#include "preload/stderr_notice.hpp"

#include <atomic>

#include "preload/raw_syscall.hpp"

namespace stacksage::preload {

namespace {
constinit std::atomic<bool> g_used{false};
}  // namespace

bool tell_stderr_once(const char* line, std::size_t len) {
    if (g_used.exchange(true, std::memory_order_acq_rel)) return false;
    tell_stderr(line, len);
    return true;
}

void tell_stderr(const char* line, std::size_t len) { raw::write_all(2, line, len); }

bool stderr_notice_used() { return g_used.load(std::memory_order_acquire); }

}  // namespace stacksage::preload
