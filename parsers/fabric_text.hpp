// What the fabric readers (ibnetdiscover's two forms, ibroute, the GUID map)
// share: walking a text line by line with its line number, splitting a line
// into words, reading numbers, and an error that names the file and line.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace stacksage::fabric_text {

// Lines of a text, "\r\n" or "\n" ended; the last line may lack its end.
class Lines {
public:
    explicit Lines(std::string_view text) : text_(text) {}
    bool next(std::string_view& line) {
        if (at_ >= text_.size()) return false;
        std::size_t end = text_.find('\n', at_);
        if (end == std::string_view::npos) end = text_.size();
        line = text_.substr(at_, end - at_);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        at_ = end + 1;
        ++number_;
        return true;
    }
    std::uint32_t number() const { return number_; }

private:
    std::string_view text_;
    std::size_t at_ = 0;
    std::uint32_t number_ = 0;
};

inline bool is_space(char c) { return c == ' ' || c == '\t'; }

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
    return s;
}

// The next blank-separated word of s (removed from s); "" at the end.
inline std::string_view next_word(std::string_view& s) {
    while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
    std::size_t n = 0;
    while (n < s.size() && !is_space(s[n])) ++n;
    std::string_view word = s.substr(0, n);
    s.remove_prefix(n);
    return word;
}

// A decimal (or, with "0x", hexadecimal) number no larger than max.
inline std::optional<std::uint64_t> parse_number(std::string_view s, std::uint64_t max) {
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
        s.remove_prefix(2);
        base = 16;
    }
    if (s.empty()) return std::nullopt;
    std::uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || p != s.data() + s.size() || v > max) return std::nullopt;
    return v;
}

// "4x" -> 4; nullopt for anything else.
inline std::optional<std::uint8_t> parse_width(std::string_view s) {
    if (s.size() < 2 || (s.back() != 'x' && s.back() != 'X')) return std::nullopt;
    auto v = parse_number(s.substr(0, s.size() - 1), 32);
    if (!v || *v == 0) return std::nullopt;
    return static_cast<std::uint8_t>(*v);
}

// "name:12: what" (the line quoted, shortened, when given).
inline Error line_error(std::string_view name, std::uint32_t line, std::string_view what,
                        std::string_view text = {}) {
    std::string message = std::string(name) + ":" + std::to_string(line) + ": " + std::string(what);
    if (!text.empty()) {
        constexpr std::size_t kQuoted = 120;
        message += " (the line reads \"";
        for (char c : text.substr(0, kQuoted)) message += (static_cast<unsigned char>(c) < 0x20 ? '?' : c);
        if (text.size() > kQuoted) message += "...";
        message += "\")";
    }
    return Error{std::move(message)};
}

// The most LIDs a subnet has (unicast LIDs are 0x0001-0xbfff).
inline constexpr std::uint64_t kMaxLid = 0xffff;
inline constexpr std::uint64_t kMaxPort = 255;

}  // namespace stacksage::fabric_text
