// Allocation-free text building into a caller's buffer, for file names,
// messages and the sampling summary, and reading decimal numbers from
// procfs and the environment: the recorder runs inside the application (no
// libstdc++, no malloc on its paths), so it cannot use std::string or
// strtoull (which sets errno). One place for the recorder and its sampling
// library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage {

// Appends to a fixed buffer, always NUL-terminated; what does not fit is
// dropped and remembered (truncated()).
class TextBuffer {
public:
    TextBuffer(char* buf, std::size_t cap) : buf_(buf), cap_(cap) {
        if (cap_ > 0) buf_[0] = '\0';
    }
    TextBuffer& add(const char* s);  // nullptr adds nothing
    TextBuffer& add(const char* s, std::size_t n);
    TextBuffer& add_char(char c) { return add(&c, 1); }
    // Decimal, zero-padded to min_digits ("0003").
    TextBuffer& add_uint(std::uint64_t v, int min_digits = 1);
    TextBuffer& add_int(std::int64_t v);
    TextBuffer& add_hex(std::uint64_t v);  // "0x1f"
    // A JSON string literal, quotes included; control characters escaped.
    TextBuffer& add_json_string(const char* s);
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

// Reads the decimal digits at p (no sign, no spaces) and moves p past them.
// \return false, with p and value unchanged, when p is not at a digit or
//         the number exceeds max; true otherwise.
bool read_decimal(const char*& p, std::uint64_t max, std::uint64_t& value);

}  // namespace stacksage
