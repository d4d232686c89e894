#include "preload/sampling/pmu_event_encoding.hpp"

#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Reads a decimal number at p; advances p. False when there is none or it
// exceeds limit.
bool read_decimal(const char*& p, unsigned limit, unsigned& out) {
    if (*p < '0' || *p > '9') return false;
    unsigned v = 0;
    while (*p >= '0' && *p <= '9') {
        v = v * 10 + static_cast<unsigned>(*p - '0');
        if (v > limit) return false;
        ++p;
    }
    out = v;
    return true;
}

// A whole term value: decimal or 0x-hex, exactly len characters.
bool parse_value(const char* s, std::size_t len, std::uint64_t& out) {
    if (len == 0) return false;
    std::uint64_t v = 0;
    if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        if (len - 2 > 16) return false;
        for (std::size_t i = 2; i < len; ++i) {
            const char c = s[i];
            unsigned d;
            if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
            else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
            else return false;
            v = (v << 4) | d;
        }
    } else {
        for (std::size_t i = 0; i < len; ++i) {
            if (s[i] < '0' || s[i] > '9') return false;
            const std::uint64_t d = static_cast<std::uint64_t>(s[i] - '0');
            if (v > (~std::uint64_t{0} - d) / 10) return false;
            v = v * 10 + d;
        }
    }
    out = v;
    return true;
}

}  // namespace

unsigned FormatSpec::width() const {
    unsigned w = 0;
    for (unsigned i = 0; i < range_count; ++i) w += static_cast<unsigned>(ranges[i].hi - ranges[i].lo + 1);
    return w;
}

bool parse_format_spec(const char* text, FormatSpec& out) {
    out = FormatSpec{};
    if (text == nullptr) return false;
    const char* p = text;
    while (is_space(*p)) ++p;
    if (std::strncmp(p, "config", 6) != 0) return false;
    p += 6;
    if (*p == ':') {
        out.word = 0;
    } else if (*p >= '1' && *p <= '3' && p[1] == ':') {
        out.word = static_cast<std::uint8_t>(*p - '0');
        ++p;
    } else {
        return false;
    }
    ++p;  // ':'
    while (true) {
        if (out.range_count == 4) return false;
        unsigned lo, hi;
        if (!read_decimal(p, 63, lo)) return false;
        hi = lo;
        if (*p == '-') {
            ++p;
            if (!read_decimal(p, 63, hi) || hi < lo) return false;
        }
        out.ranges[out.range_count++] = {static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(hi)};
        if (*p != ',') break;
        ++p;
    }
    while (is_space(*p)) ++p;
    return *p == '\0';
}

bool apply_format(const FormatSpec& spec, std::uint64_t value, EventEncoding& encoding) {
    const unsigned width = spec.width();
    if (width < 64 && (value >> width) != 0) return false;
    std::uint64_t& word = encoding.config[spec.word & 3];
    for (unsigned i = 0; i < spec.range_count; ++i) {
        const unsigned lo = spec.ranges[i].lo;
        const unsigned n = static_cast<unsigned>(spec.ranges[i].hi - lo + 1);
        const std::uint64_t mask = n >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << n) - 1);
        word = (word & ~(mask << lo)) | ((value & mask) << lo);
        value = n >= 64 ? 0 : value >> n;
    }
    return true;
}

const FormatSpec* find_format(const NamedFormat* formats, std::size_t count, const char* name) {
    for (std::size_t i = 0; i < count; ++i)
        if (std::strcmp(formats[i].name, name) == 0) return &formats[i].spec;
    return nullptr;
}

bool encode_event(const char* event_text, const NamedFormat* formats, std::size_t format_count,
                  EventEncoding& out, char* error, std::size_t error_cap) {
    out = EventEncoding{};
    TextBuffer err(error, error_cap);
    if (event_text == nullptr) {
        err.add("no event text");
        return false;
    }
    const char* p = event_text;
    while (is_space(*p)) ++p;
    std::size_t end = std::strlen(p);
    while (end > 0 && is_space(p[end - 1])) --end;
    if (end == 0) {
        err.add("empty event text");
        return false;
    }
    std::size_t i = 0;
    while (i < end) {
        std::size_t j = i;
        while (j < end && p[j] != ',') ++j;
        const char* term = p + i;
        const std::size_t len = j - i;
        const char* eq = static_cast<const char*>(std::memchr(term, '=', len));
        const std::size_t name_len = eq ? static_cast<std::size_t>(eq - term) : len;
        char name[32];
        if (name_len == 0 || name_len >= sizeof name) {
            err.add("bad term '").add(term, len).add("'");
            return false;
        }
        std::memcpy(name, term, name_len);
        name[name_len] = '\0';
        std::uint64_t value = 1;
        if (eq != nullptr && !parse_value(eq + 1, len - name_len - 1, value)) {
            err.add("bad value in '").add(term, len).add("'");
            return false;
        }
        const FormatSpec* spec = find_format(formats, format_count, name);
        if (spec == nullptr) {
            err.add("the PMU has no format field '").add(name).add("'");
            return false;
        }
        if (!apply_format(*spec, value, out)) {
            err.add("value of '").add(term, len).add("' does not fit its field");
            return false;
        }
        i = j + 1;
    }
    return true;
}

}  // namespace stacksage::sampling
