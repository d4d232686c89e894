// Allocation-free string building for file names and messages.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

// Appends to a fixed buffer, always NUL-terminated, dropping what does not fit.
class TextBuffer {
public:
    TextBuffer(char* buf, std::size_t cap) : buf_(buf), cap_(cap) {
        if (cap_ > 0) buf_[0] = '\0';
    }
    TextBuffer& add(const char* s);
    TextBuffer& add(const char* s, std::size_t n);
    TextBuffer& add_uint(std::uint64_t v, int min_digits = 1);
    TextBuffer& add_int(std::int64_t v);
    bool truncated() const { return truncated_; }
    std::size_t size() const { return len_; }
    const char* c_str() const { return buf_; }

private:
    char* buf_;
    std::size_t cap_;
    std::size_t len_ = 0;
    bool truncated_ = false;
};

}  // namespace stacksage::preload
