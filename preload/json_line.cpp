#include "preload/json_line.hpp"

namespace stacksage::preload {

void JsonLine::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (depth_ > 0) {
        if (has_items_[depth_ - 1]) put(',');
        has_items_[depth_ - 1] = true;
    }
}

void JsonLine::open_object() {
    before_value();
    put('{');
    if (depth_ >= kMaxDepth) {
        overflow_ = true;
        return;
    }
    is_array_[depth_] = false;
    has_items_[depth_] = false;
    ++depth_;
}

void JsonLine::close_object() {
    if (depth_ == 0) return;
    --depth_;
    put('}');
}

void JsonLine::open_array() {
    before_value();
    put('[');
    if (depth_ >= kMaxDepth) {
        overflow_ = true;
        return;
    }
    is_array_[depth_] = true;
    has_items_[depth_] = false;
    ++depth_;
}

void JsonLine::close_array() {
    if (depth_ == 0) return;
    --depth_;
    put(']');
}

void JsonLine::str(const char* s) {
    std::size_t n = 0;
    if (s != nullptr)
        while (s[n] != '\0') ++n;
    str(s, n);
}

void JsonLine::str(const char* s, std::size_t n) {
    before_value();
    put('"');
    // Paths and names rarely need escaping: copy runs of plain bytes at once.
    std::size_t plain = 0;
    while (plain < n) {
        auto c = static_cast<unsigned char>(s[plain]);
        if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) break;
        ++plain;
    }
    put(s, plain);
    static const char kHex[] = "0123456789abcdef";
    for (std::size_t i = plain; i < n && !overflow_; ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        switch (c) {
            case '"': put("\\\"", 2); break;
            case '\\': put("\\\\", 2); break;
            case '\n': put("\\n", 2); break;
            case '\r': put("\\r", 2); break;
            case '\t': put("\\t", 2); break;
            default:
                if (c < 0x20 || c == 0x7f) {
                    char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                    put(esc, 6);
                } else {
                    // Bytes >= 0x80 pass through: command lines and paths are
                    // almost always UTF-8; a reader must tolerate the rest.
                    put(static_cast<char>(c));
                }
        }
    }
    put('"');
}

void JsonLine::u64(std::uint64_t v) {
    before_value();
    char digits[24];
    int at = 24;
    do {
        digits[--at] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    put(digits + at, static_cast<std::size_t>(24 - at));
}

void JsonLine::i64(std::int64_t v) {
    if (v < 0) {
        before_value();
        put('-');
        after_key_ = true;  // the digits continue the same value
        u64(static_cast<std::uint64_t>(-(v + 1)) + 1);
        return;
    }
    u64(static_cast<std::uint64_t>(v));
}

void JsonLine::boolean(bool v) {
    before_value();
    if (v)
        put("true", 4);
    else
        put("false", 5);
}

void JsonLine::null() {
    before_value();
    put("null", 4);
}

void JsonLine::hex(std::uintptr_t v) {
    static const char kHex[] = "0123456789abcdef";
    char digits[2 + 16];
    int n = 0;
    do {
        digits[n++] = kHex[v & 15];
        v >>= 4;
    } while (v != 0);
    before_value();
    put("\"0x", 3);
    while (n > 0) put(digits[--n]);
    put('"');
}

void JsonLine::mask(const CpuMask& m) {
    if (!m.valid) {
        null();
        return;
    }
    before_value();
    put('"');
    if (overflow_ || len_ + 2 > cap_) {
        overflow_ = true;
        return;
    }
    // The list form needs no escaping: format it in place.
    std::size_t room = cap_ - len_ - 2;  // keep room for '"' and '\n'
    std::size_t n = m.format_list(buf_ + len_, room);
    if (n == 0 && m.count() != 0) {
        overflow_ = true;
        return;
    }
    len_ += n;
    put('"');
}

std::size_t JsonLine::finish() {
    while (depth_ > 0) {
        if (is_array_[depth_ - 1])
            close_array();
        else
            close_object();
    }
    if (overflow_ || len_ + 1 > cap_) return 0;
    buf_[len_++] = '\n';
    return len_;
}

}  // namespace stacksage::preload
