// JsonLine: builds one JSON object, terminated by '\n', in a caller-owned buffer.
//
// The event log is JSON Lines written with one write(2) per event, so each
// event is built completely in memory first. No allocation and no libc
// formatting (printf may allocate and is not async-signal-safe): a line can be
// built in a signal handler or in the child of fork().
//
// When something does not fit, the builder remembers it and finish() returns
// 0; the caller then writes a short "truncated" line instead of a broken one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/cpu_mask.hpp"

namespace stacksage::preload {

class JsonLine {
public:
    JsonLine(char* buf, std::size_t cap) : buf_(buf), cap_(cap) {}

    // Nesting: objects and arrays. The outermost object is opened by the
    // first open_object() call.
    void open_object();
    void close_object();
    void open_array();
    void close_array();
    // Writes `"name":` (with the separating comma when needed). Names are
    // our own literals and are not escaped. Inline so that the length of a
    // literal is known at compile time: a thread_start and a thread_end
    // write about twenty keys on every thread's critical path.
    void key(const char* name) {
        if (depth_ > 0) {
            if (has_items_[depth_ - 1]) put(',');
            has_items_[depth_ - 1] = true;
        }
        const std::size_t n = __builtin_strlen(name);
        if (len_ + n + 4 > cap_) {
            overflow_ = true;
            return;
        }
        buf_[len_++] = '"';
        __builtin_memcpy(buf_ + len_, name, n);
        len_ += n;
        buf_[len_++] = '"';
        buf_[len_++] = ':';
        after_key_ = true;
    }

    // Values (inside arrays, or right after key()).
    void str(const char* s);
    void str(const char* s, std::size_t len);
    void i64(std::int64_t v);
    void u64(std::uint64_t v);
    void boolean(bool v);
    void null();
    void hex(std::uintptr_t v);     // "0x7f..." as a string
    void mask(const CpuMask& m);    // "0-3,8" as a string; null when unknown
    // A value already in JSON form (a string with its quotes, escaped).
    void json_value(const char* text, std::size_t n) {
        before_value();
        put(text, n);
    }

    // Shorthands: key + value.
    void field(const char* name, const char* s) { key(name); str(s); }
    void field(const char* name, std::int64_t v) { key(name); i64(v); }
    void field_u(const char* name, std::uint64_t v) { key(name); u64(v); }
    void field_bool(const char* name, bool v) { key(name); boolean(v); }
    void field_hex(const char* name, std::uintptr_t v) { key(name); hex(v); }
    void field_mask(const char* name, const CpuMask& m) { key(name); mask(m); }

    // Closes every open level, appends '\n'. Returns the line's length, or 0
    // when the buffer overflowed.
    std::size_t finish();

    bool overflowed() const { return overflow_; }
    std::size_t size() const { return len_; }
    const char* data() const { return buf_; }

private:
    static constexpr int kMaxDepth = 8;
    // One byte always stays free for the final '\n'.
    void put(char c) {
        if (len_ + 2 > cap_) {
            overflow_ = true;
            return;
        }
        buf_[len_++] = c;
    }
    void put(const char* s, std::size_t n) {
        if (len_ + n + 1 > cap_) {
            overflow_ = true;
            return;
        }
        __builtin_memcpy(buf_ + len_, s, n);
        len_ += n;
    }
    void before_value();

    char* buf_;
    std::size_t cap_;
    std::size_t len_ = 0;
    bool overflow_ = false;
    int depth_ = 0;
    bool is_array_[kMaxDepth] = {};
    bool has_items_[kMaxDepth] = {};
    bool after_key_ = false;
};

}  // namespace stacksage::preload
