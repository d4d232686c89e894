// Sums and differences of figures read from logs and models (CPU times,
// context switches, times) that cannot overflow: a log may hold any 64-bit value, and a signed overflow is
// undefined behaviour (the sanitizer build stops on it).
#pragma once

#include <cstdint>
#include <limits>

namespace stacksage {

// a + b, held at INT64_MAX or INT64_MIN where the true sum lies beyond.
inline std::int64_t add_saturating(std::int64_t a, std::int64_t b) {
    std::int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

// to - from, held at INT64_MAX or INT64_MIN where the true difference lies
// beyond (two times of a model read from a file may be any 64-bit values).
inline std::int64_t subtract_saturating(std::int64_t to, std::int64_t from) {
    std::int64_t difference = 0;
    if (!__builtin_sub_overflow(to, from, &difference)) return difference;
    return from < 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

}  // namespace stacksage
