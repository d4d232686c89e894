// Sums of figures read from logs (CPU times, context switches) that cannot
// overflow: a log may hold any 64-bit value, and a signed overflow is
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

}  // namespace stacksage
