#include "preload/text.hpp"

namespace stacksage::preload {

TextBuffer& TextBuffer::add(const char* s) {
    std::size_t n = 0;
    if (s != nullptr)
        while (s[n] != '\0') ++n;
    return add(s, n);
}

TextBuffer& TextBuffer::add(const char* s, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
        if (len_ + 1 >= cap_) {
            truncated_ = true;
            break;
        }
        buf_[len_++] = s[i];
    }
    if (cap_ > 0) buf_[len_] = '\0';
    return *this;
}

TextBuffer& TextBuffer::add_uint(std::uint64_t v, int min_digits) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0 && n < 24);
    while (n < min_digits && n < 24) digits[n++] = '0';
    char out[24];
    for (int i = 0; i < n; ++i) out[i] = digits[n - 1 - i];
    return add(out, static_cast<std::size_t>(n));
}

TextBuffer& TextBuffer::add_int(std::int64_t v) {
    if (v < 0) {
        add("-", 1);
        return add_uint(static_cast<std::uint64_t>(-(v + 1)) + 1);
    }
    return add_uint(static_cast<std::uint64_t>(v));
}

}  // namespace stacksage::preload
