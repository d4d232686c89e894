// Decimal and hexadecimal digits written straight into a line being built,
// with no bounds check (the caller reserved room: at most 20 and 16 bytes)
// and no locale: what every event line's numbers go through, and the
// thread_start of every short thread on its critical path
// (docs/PERFORMANCE.md, pthread_create).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

// Number of decimal digits of v (1 for 0).
inline unsigned decimal_length(std::uint64_t v) {
    unsigned n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

// Writes v in decimal at out; returns the end. The length is found first so
// that the digits go to their place, two per division, without a copy.
inline char* write_decimal(char* out, std::uint64_t v) {
    static constexpr char kPairs[] =
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    const unsigned n = decimal_length(v);
    char* at = out + n;
    while (v >= 100) {
        const auto pair = static_cast<unsigned>(v % 100);
        v /= 100;
        at -= 2;
        at[0] = kPairs[2 * pair];
        at[1] = kPairs[2 * pair + 1];
    }
    if (v >= 10) {
        at[-2] = kPairs[2 * v];
        at[-1] = kPairs[2 * v + 1];
    } else {
        at[-1] = static_cast<char>('0' + v);
    }
    return out + n;
}

// Writes v in decimal with a '-' when negative; returns the end (at most 20 bytes).
inline char* write_signed_decimal(char* out, std::int64_t v) {
    if (v >= 0) return write_decimal(out, static_cast<std::uint64_t>(v));
    *out++ = '-';
    return write_decimal(out, static_cast<std::uint64_t>(-(v + 1)) + 1);
}

// Number of hexadecimal digits of v (1 for 0).
inline unsigned hex_length(std::uint64_t v) {
    return v == 0 ? 1 : (67 - static_cast<unsigned>(__builtin_clzll(v))) / 4;
}

// Writes v's lowercase hexadecimal digits (no "0x") at out; returns the end.
inline char* write_hex_digits(char* out, std::uint64_t v) {
    static constexpr char kHex[] = "0123456789abcdef";
    const unsigned n = hex_length(v);
    for (unsigned i = n; i > 0; --i, v >>= 4) out[i - 1] = kHex[v & 15];
    return out + n;
}

}  // namespace stacksage::preload
