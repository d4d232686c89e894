// PMU event encodings as the kernel publishes them in sysfs.
//
// A PMU's format/<field> files say where a field lives in perf_event_attr
// ("config:0-7", "config1:0-15", "config:8-15,40-47", "config2:0"); its
// events/<name> files spell an event with those fields
// ("event=0xcd,umask=0x1,ldlat=3"). Turning the two into config, config1
// and config2 is how perf does it, and how we avoid hard-coding encodings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

// Where one format field lives: up to 4 bit ranges of one config word, the
// value's low bits going to the first range.
struct FormatSpec {
    std::uint8_t word = 0;  // 0: config, 1: config1, 2: config2, 3: config3
    std::uint8_t range_count = 0;
    struct Range {
        std::uint8_t lo, hi;  // inclusive bit numbers
    } ranges[4] = {};
    // Total number of bits the field holds.
    unsigned width() const;
};

// Parses a format file's text ("config1:0-15\n"); whitespace around is allowed.
// \return false on anything else (unknown word, reversed or out-of-range bits,
//         more than 4 ranges).
bool parse_format_spec(const char* text, FormatSpec& out);

struct EventEncoding {
    std::uint64_t config[4] = {0, 0, 0, 0};  // config, config1, config2, config3
};

// Places value into the field's bits of encoding (the field's old bits are
// cleared first). \return false when value does not fit in the field.
bool apply_format(const FormatSpec& spec, std::uint64_t value, EventEncoding& encoding);

// Looks up a format field by name: the caller's table of a PMU's formats.
struct NamedFormat {
    char name[32];
    FormatSpec spec;
};

// Parses an event string ("event=0xcd,umask=0x1,ldlat=3"; a bare term means
// 1; values in decimal or 0x-hex) against a PMU's formats.
// \return true with the encoding.
// \return false with a message in error naming the offending term (a term
//         the PMU has no format for, a bad number, a value too wide).
bool encode_event(const char* event_text, const NamedFormat* formats, std::size_t format_count,
                  EventEncoding& out, char* error, std::size_t error_cap);

const FormatSpec* find_format(const NamedFormat* formats, std::size_t count, const char* name);

}  // namespace stacksage::sampling
