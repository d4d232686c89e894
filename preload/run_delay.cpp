#include "preload/run_delay.hpp"

#include <fcntl.h>

#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

// One decimal number at *p, then the spaces after it.
bool read_number(const char*& p, std::int64_t& out) {
    std::uint64_t v = 0;
    if (!read_decimal(p, static_cast<std::uint64_t>(INT64_MAX), v)) return false;
    while (*p == ' ') ++p;
    out = static_cast<std::int64_t>(v);
    return true;
}

}  // namespace

SchedWait parse_schedstat(const char* text) {
    const char* p = text;
    std::int64_t ran = 0, waited = 0, slices = 0;
    if (!read_number(p, ran) || !read_number(p, waited) || !read_number(p, slices)) return {};
    if (*p == '\n') ++p;
    if (*p != '\0') return {};
    return {waited, slices};
}

SchedWait read_sched_wait(int tid) {
    char path[64];
    TextBuffer name(path, sizeof path);
    if (tid == 0)
        name.add("/proc/thread-self/schedstat");
    else
        name.add("/proc/self/task/").add_uint(static_cast<std::uint64_t>(tid)).add("/schedstat");
    char text[96];
    if (raw::read_small_file(AT_FDCWD, path, text, sizeof text) <= 0) return {};
    return parse_schedstat(text);
}

}  // namespace stacksage::preload
