#include "reports/terminal_text.hpp"

namespace stacksage {

namespace {

void append_escape(std::string& out, unsigned char byte) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 0xf];
}

// Length of the valid UTF-8 sequence at text[i] (2 to 4), or 0 when the bytes
// there are not one (a stray continuation byte, a cut or overlong sequence,
// a surrogate, beyond U+10FFFF).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
    const unsigned char lead = byte(i);
    std::size_t length = 0;
    unsigned char low = 0x80, high = 0xbf;  // the second byte's range
    if (lead >= 0xc2 && lead <= 0xdf) length = 2;
    else if (lead == 0xe0) length = 3, low = 0xa0;
    else if (lead == 0xed) length = 3, high = 0x9f;
    else if (lead >= 0xe1 && lead <= 0xef) length = 3;
    else if (lead == 0xf0) length = 4, low = 0x90;
    else if (lead == 0xf4) length = 4, high = 0x8f;
    else if (lead >= 0xf1 && lead <= 0xf3) length = 4;
    else return 0;
    if (i + length > text.size()) return 0;
    if (byte(i + 1) < low || byte(i + 1) > high) return 0;
    for (std::size_t k = 2; k < length; ++k)
        if (byte(i + k) < 0x80 || byte(i + k) > 0xbf) return 0;
    return length;
}

std::string escape(std::string_view text, bool keep_newlines) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && !(keep_newlines && c == '\n')) || c == 0x7f) append_escape(out, c);
            else out += static_cast<char>(c);
            ++i;
            continue;
        }
        const std::size_t length = utf8_sequence_length(text, i);
        const bool c1_control = length == 2 && c == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
        if (length == 0 || c1_control) {
            // Each byte of it escaped: a cut sequence's other bytes are checked on their own.
            const std::size_t n = c1_control ? 2 : 1;
            for (std::size_t k = 0; k < n; ++k) append_escape(out, static_cast<unsigned char>(text[i + k]));
            i += n;
            continue;
        }
        out.append(text.substr(i, length));
        i += length;
    }
    return out;
}

}  // namespace

std::string terminal_safe(std::string_view text) { return escape(text, false); }

std::string terminal_safe_lines(std::string_view text) { return escape(text, true); }

}  // namespace stacksage
