#include "preload/json_line.hpp"

#include "preload/number_digits.hpp"

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

namespace {

// Length of the valid UTF-8 sequence that starts at s[0] (of the n bytes
// left), or 0 when s[0] does not start one: shortest form only, no
// surrogates (U+D800..U+DFFF), nothing past U+10FFFF (RFC 3629), which is
// what a strict JSON reader accepts.
std::size_t utf8_sequence(const unsigned char* s, std::size_t n) {
    const unsigned char c = s[0];
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0) lo = 0xa0;       // overlong
        else if (c == 0xed) hi = 0x9f;  // surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0) lo = 0x90;       // overlong
        else if (c == 0xf4) hi = 0x8f;  // past U+10FFFF
    } else {
        return 0;  // ASCII is not asked for; 0x80..0xc1 and 0xf5..0xff start nothing
    }
    if (n < len || s[1] < lo || s[1] > hi) return 0;
    for (std::size_t i = 2; i < len; ++i)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    return len;
}

bool plain_ascii(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

}  // namespace

void JsonLine::str(const char* s, std::size_t n) {
    before_value();
    put('"');
    const auto* u = reinterpret_cast<const unsigned char*>(s);
    static const char kHex[] = "0123456789abcdef";
    std::size_t i = 0;
    while (i < n && !overflow_) {
        // Paths and names rarely need escaping: copy runs of printable ASCII
        // and valid UTF-8 at once.
        std::size_t plain = i;
        for (;;) {
            if (plain < n && plain_ascii(u[plain])) {
                ++plain;
            } else if (plain < n && u[plain] >= 0x80) {
                const std::size_t len = utf8_sequence(u + plain, n - plain);
                if (len == 0) break;
                plain += len;
            } else {
                break;
            }
        }
        put(s + i, plain - i);
        if (plain >= n) break;
        i = plain;
        const unsigned char c = u[i++];
        switch (c) {
            case '"': put("\\\"", 2); break;
            case '\\': put("\\\\", 2); break;
            case '\n': put("\\n", 2); break;
            case '\r': put("\\r", 2); break;
            case '\t': put("\\t", 2); break;
            default: {
                // A control character (C0, DEL), or a byte that is no part of
                // valid UTF-8: \u00XX, the Latin-1 character of the same
                // number (docs/event-log.md, "Strings"). Every line stays
                // strict JSON; a Latin-1 name still reads right.
                char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
                put(esc, 6);
            }
        }
    }
    put('"');
}

// Every line carries a clock reading of 13 digits or more and a few ids:
// digits written in place (number_digits.hpp) after one bounds check.
void JsonLine::u64(std::uint64_t v) {
    before_value();
    if (len_ + decimal_length(v) + 1 > cap_) {  // and the byte kept for '\n'
        overflow_ = true;
        return;
    }
    len_ = static_cast<std::size_t>(write_decimal(buf_ + len_, v) - buf_);
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
    // Digits written in place after one bounds check (two per thread_start).
    before_value();
    if (len_ + hex_length(v) + 5 > cap_) {  // '"0x', the digits, '"', and the byte kept for '\n'
        overflow_ = true;
        return;
    }
    char* out = buf_ + len_;
    *out++ = '"';
    *out++ = '0';
    *out++ = 'x';
    out = write_hex_digits(out, v);
    *out++ = '"';
    len_ = static_cast<std::size_t>(out - buf_);
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
