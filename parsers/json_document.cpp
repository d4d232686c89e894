#include "parsers/json_document.hpp"

#include <charconv>
#include <cstring>

namespace stacksage {

namespace {
// Deeper nesting than any event has means a hostile or broken line; the
// limit keeps recursion bounded.
constexpr std::size_t kMaxDepth = 64;

int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}
}  // namespace

bool JsonDocument::fail(std::string_view why) {
    if (error_.empty()) {
        error_ = why;
        error_offset_ = at_;
    }
    return false;
}

void JsonDocument::skip_space() {
    while (at_ < text_.size()) {
        const char c = text_[at_];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
        ++at_;
    }
}

bool JsonDocument::parse(std::string_view text) {
    values_.clear();
    arena_.clear();
    // Decoded strings are never longer than their source, so one reservation
    // keeps every string_view into the arena valid for the whole parse.
    if (arena_.capacity() < text.size()) arena_.reserve(text.size());
    text_ = text;
    at_ = 0;
    error_ = {};
    error_offset_ = 0;
    ValueIndex root = kNone;
    skip_space();
    if (!parse_value(0, root)) return false;
    skip_space();
    if (at_ != text_.size()) return fail("unexpected text after the JSON value");
    return true;
}

bool JsonDocument::parse_string(std::string_view& out) {
    // at_ is on the opening quote.
    ++at_;
    const std::size_t begin = at_;
    // Fast path: no escapes.
    while (at_ < text_.size()) {
        const char c = text_[at_];
        if (c == '"') {
            out = text_.substr(begin, at_ - begin);
            ++at_;
            return true;
        }
        if (c == '\\') break;
        if (static_cast<unsigned char>(c) < 0x20) return fail("control character inside a string");
        ++at_;
    }
    if (at_ >= text_.size()) return fail("unterminated string");
    const std::size_t arena_begin = arena_.size();
    arena_.append(text_.substr(begin, at_ - begin));
    while (at_ < text_.size()) {
        const char c = text_[at_];
        if (c == '"') {
            out = std::string_view(arena_).substr(arena_begin);
            ++at_;
            return true;
        }
        if (static_cast<unsigned char>(c) < 0x20) return fail("control character inside a string");
        if (c != '\\') {
            arena_.push_back(c);
            ++at_;
            continue;
        }
        if (at_ + 1 >= text_.size()) return fail("unterminated escape");
        const char e = text_[at_ + 1];
        at_ += 2;
        switch (e) {
            case '"': arena_.push_back('"'); break;
            case '\\': arena_.push_back('\\'); break;
            case '/': arena_.push_back('/'); break;
            case 'b': arena_.push_back('\b'); break;
            case 'f': arena_.push_back('\f'); break;
            case 'n': arena_.push_back('\n'); break;
            case 'r': arena_.push_back('\r'); break;
            case 't': arena_.push_back('\t'); break;
            case 'u': {
                auto read4 = [&](std::uint32_t& cp) {
                    if (at_ + 4 > text_.size()) return false;
                    cp = 0;
                    for (int i = 0; i < 4; ++i) {
                        const int d = hex_digit(text_[at_ + static_cast<std::size_t>(i)]);
                        if (d < 0) return false;
                        cp = cp * 16 + static_cast<std::uint32_t>(d);
                    }
                    at_ += 4;
                    return true;
                };
                std::uint32_t cp = 0;
                if (!read4(cp)) return fail("bad \\u escape");
                if (cp >= 0xD800 && cp < 0xDC00) {
                    std::uint32_t low = 0;
                    if (at_ + 2 <= text_.size() && text_[at_] == '\\' && text_[at_ + 1] == 'u') {
                        at_ += 2;
                        if (!read4(low)) return fail("bad \\u escape");
                    }
                    if (low >= 0xDC00 && low < 0xE000)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    else
                        cp = 0xFFFD;  // lone surrogate: replaced, as nlohmann's replace mode does
                } else if (cp >= 0xDC00 && cp < 0xE000) {
                    cp = 0xFFFD;
                }
                append_utf8(arena_, cp);
                break;
            }
            default: return fail("unknown escape in a string");
        }
    }
    return fail("unterminated string");
}

bool JsonDocument::parse_number(Value& v) {
    const std::size_t begin = at_;
    bool is_float = false;
    if (at_ < text_.size() && text_[at_] == '-') ++at_;
    if (at_ >= text_.size() || text_[at_] < '0' || text_[at_] > '9') return fail("bad number");
    if (text_[at_] == '0' && at_ + 1 < text_.size() && text_[at_ + 1] >= '0' && text_[at_ + 1] <= '9')
        return fail("bad number (leading zero)");
    while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    if (at_ < text_.size() && text_[at_] == '.') {
        is_float = true;
        ++at_;
        if (at_ >= text_.size() || text_[at_] < '0' || text_[at_] > '9') return fail("bad number");
        while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    }
    if (at_ < text_.size() && (text_[at_] == 'e' || text_[at_] == 'E')) {
        is_float = true;
        ++at_;
        if (at_ < text_.size() && (text_[at_] == '+' || text_[at_] == '-')) ++at_;
        if (at_ >= text_.size() || text_[at_] < '0' || text_[at_] > '9') return fail("bad number");
        while (at_ < text_.size() && text_[at_] >= '0' && text_[at_] <= '9') ++at_;
    }
    const char* first = text_.data() + begin;
    const char* last = text_.data() + at_;
    if (!is_float) {
        auto [p, ec] = std::from_chars(first, last, v.integer);
        if (ec == std::errc() && p == last) {
            v.type = JsonType::Int;
            v.number = static_cast<double>(v.integer);
            return true;
        }
        // Out of int64 range (an unsigned 64-bit value): kept as a double.
    }
    auto [p, ec] = std::from_chars(first, last, v.number);
    if (ec != std::errc() || p != last) return fail("bad number");
    v.type = JsonType::Float;
    return true;
}

bool JsonDocument::parse_value(std::size_t depth, ValueIndex& out) {
    if (depth > kMaxDepth) return fail("nesting too deep");
    if (at_ >= text_.size()) return fail("unexpected end of text");
    out = static_cast<ValueIndex>(values_.size());
    values_.emplace_back();
    const char c = text_[at_];
    switch (c) {
        case '{':
        case '[': {
            const bool is_object = c == '{';
            values_[out].type = is_object ? JsonType::Object : JsonType::Array;
            ++at_;
            skip_space();
            const char close = is_object ? '}' : ']';
            if (at_ < text_.size() && text_[at_] == close) {
                ++at_;
                return true;
            }
            ValueIndex last = kNone;
            std::uint32_t count = 0;
            for (;;) {
                skip_space();
                std::string_view key;
                if (is_object) {
                    if (at_ >= text_.size() || text_[at_] != '"') return fail("expected a member name");
                    if (!parse_string(key)) return false;
                    skip_space();
                    if (at_ >= text_.size() || text_[at_] != ':') return fail("expected ':'");
                    ++at_;
                    skip_space();
                }
                ValueIndex child = kNone;
                if (!parse_value(depth + 1, child)) return false;
                values_[child].key = key;
                if (last == kNone)
                    values_[out].first = child;
                else
                    values_[last].next = child;
                last = child;
                ++count;
                skip_space();
                if (at_ >= text_.size()) return fail("unexpected end of text");
                if (text_[at_] == ',') {
                    ++at_;
                    continue;
                }
                if (text_[at_] == close) {
                    ++at_;
                    values_[out].count = count;
                    return true;
                }
                return fail(is_object ? "expected ',' or '}'" : "expected ',' or ']'");
            }
        }
        case '"': {
            std::string_view s;
            if (!parse_string(s)) return false;
            values_[out].type = JsonType::String;
            values_[out].text = s;
            return true;
        }
        case 't':
        case 'f':
        case 'n': {
            const std::string_view word = c == 't' ? "true" : c == 'f' ? "false" : "null";
            if (text_.substr(at_, word.size()) != word) return fail("unknown literal");
            at_ += word.size();
            values_[out].type = c == 'n' ? JsonType::Null : JsonType::Bool;
            values_[out].boolean = c == 't';
            return true;
        }
        default: {
            if (c != '-' && (c < '0' || c > '9')) return fail("unexpected character");
            Value v;
            if (!parse_number(v)) return false;
            values_[out].type = v.type;
            values_[out].integer = v.integer;
            values_[out].number = v.number;
            return true;
        }
    }
}

JsonDocument::ValueIndex JsonDocument::find(ValueIndex object, std::string_view key) const {
    if (!holds(object) || values_[object].type != JsonType::Object) return kNone;
    for (ValueIndex m = values_[object].first; m != kNone; m = values_[m].next)
        if (values_[m].key == key) return m;
    return kNone;
}

JsonDocument::ValueIndex JsonDocument::first_child(ValueIndex v) const {
    if (!holds(v)) return kNone;
    return values_[v].first;
}

std::uint32_t JsonDocument::size(ValueIndex v) const {
    if (!holds(v)) return 0;
    return values_[v].count;
}

std::optional<std::int64_t> JsonDocument::as_int(ValueIndex v) const {
    if (!holds(v) || values_[v].type != JsonType::Int) return std::nullopt;
    return values_[v].integer;
}

std::optional<double> JsonDocument::as_double(ValueIndex v) const {
    if (!holds(v)) return std::nullopt;
    if (values_[v].type != JsonType::Int && values_[v].type != JsonType::Float) return std::nullopt;
    return values_[v].number;
}

std::optional<bool> JsonDocument::as_bool(ValueIndex v) const {
    if (!holds(v) || values_[v].type != JsonType::Bool) return std::nullopt;
    return values_[v].boolean;
}

std::optional<std::string_view> JsonDocument::as_string(ValueIndex v) const {
    if (!holds(v) || values_[v].type != JsonType::String) return std::nullopt;
    return values_[v].text;
}

}  // namespace stacksage
