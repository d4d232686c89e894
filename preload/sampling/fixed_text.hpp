// Allocation-free text building into a caller's buffer, for messages and
// the summary file: the sampling code runs inside the application (no
// libstdc++, no malloc in hot paths), so it cannot use std::string.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

// Appends to a fixed buffer, always NUL-terminated; what does not fit is
// dropped and remembered (truncated()).
class FixedText {
public:
    FixedText(char* buf, std::size_t cap) : buf_(buf), cap_(cap) {
        if (cap_ > 0) buf_[0] = '\0';
    }
    FixedText& add(const char* s);
    FixedText& add(const char* s, std::size_t n);
    FixedText& add_char(char c) { return add(&c, 1); }
    FixedText& add_uint(std::uint64_t v);
    FixedText& add_int(std::int64_t v);
    FixedText& add_hex(std::uint64_t v);  // "0x1f"
    // A JSON string literal, quotes included; control characters escaped.
    FixedText& add_json_string(const char* s);
    void clear() {
        len_ = 0;
        truncated_ = false;
        if (cap_ > 0) buf_[0] = '\0';
    }
    bool truncated() const { return truncated_; }
    std::size_t size() const { return len_; }
    const char* c_str() const { return buf_; }

private:
    char* buf_;
    std::size_t cap_;
    std::size_t len_ = 0;
    bool truncated_ = false;
};

}  // namespace stacksage::sampling
