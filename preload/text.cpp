#include "preload/text.hpp"

#include <algorithm>
#include <cstring>

#include "preload/number_digits.hpp"

namespace stacksage {

TextBuffer& TextBuffer::add(const char* s) { return s ? add(s, std::strlen(s)) : *this; }

TextBuffer& TextBuffer::add(const char* s, std::size_t n) {
    if (cap_ == 0) {
        truncated_ = truncated_ || n > 0;
        return *this;
    }
    const std::size_t room = cap_ - 1 - len_;
    if (n > room) {
        truncated_ = true;
        n = room;
    }
    std::memcpy(buf_ + len_, s, n);
    len_ += n;
    buf_[len_] = '\0';
    return *this;
}

TextBuffer& TextBuffer::add_uint(std::uint64_t v, int min_digits) {
    // Zeros in front up to min_digits (24 characters at most), then the digits.
    char out[24];
    const int digits = static_cast<int>(preload::decimal_length(v));
    const int zeros = std::max(0, std::min(min_digits, 24) - digits);
    std::memset(out, '0', static_cast<std::size_t>(zeros));
    const char* end = preload::write_decimal(out + zeros, v);
    return add(out, static_cast<std::size_t>(end - out));
}

TextBuffer& TextBuffer::add_int(std::int64_t v) {
    if (v < 0) {
        add("-", 1);
        // Negating INT64_MIN overflows; go through the unsigned value.
        return add_uint(~static_cast<std::uint64_t>(v) + 1);
    }
    return add_uint(static_cast<std::uint64_t>(v));
}

TextBuffer& TextBuffer::add_hex(std::uint64_t v) {
    char out[18] = {'0', 'x'};
    const char* end = preload::write_hex_digits(out + 2, v);
    return add(out, static_cast<std::size_t>(end - out));
}

TextBuffer& TextBuffer::add_json_string(const char* s) {
    add("\"", 1);
    for (const char* p = s ? s : ""; *p != '\0'; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c == '"' || c == '\\') {
            const char esc[2] = {'\\', static_cast<char>(c)};
            add(esc, 2);
        } else if (c < 0x20) {
            const char esc[6] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 0xf]};
            add(esc, 6);
        } else {
            add(p, 1);
        }
    }
    return add("\"", 1);
}

bool read_decimal(const char*& p, std::uint64_t max, std::uint64_t& value) {
    const char* at = p;
    if (*at < '0' || *at > '9') return false;
    std::uint64_t v = 0;
    for (; *at >= '0' && *at <= '9'; ++at) {
        const auto digit = static_cast<std::uint64_t>(*at - '0');
        if (v > (max - digit) / 10) return false;  // v * 10 + digit > max, without overflowing
        v = v * 10 + digit;
    }
    p = at;
    value = v;
    return true;
}

}  // namespace stacksage
