// The recorder's decimal reader (preload/text.hpp), used on procfs files,
// directory names and launcher variables.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "preload/text.hpp"

using stacksage::read_decimal;

TEST(ReadDecimal, ReadsTheDigitsAndStopsAfterThem) {
    const char* text = "1234 rest";
    const char* p = text;
    std::uint64_t v = 0;
    ASSERT_TRUE(read_decimal(p, UINT64_MAX, v));
    EXPECT_EQ(v, 1234u);
    EXPECT_EQ(p, text + 4);
    p = "0";
    ASSERT_TRUE(read_decimal(p, 0, v));
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(*p, '\0');
    p = "007x";
    ASSERT_TRUE(read_decimal(p, 10, v));
    EXPECT_EQ(v, 7u);
    EXPECT_EQ(*p, 'x');
}

// Up to max exactly; one more, or one digit more, is refused with nothing
// consumed, also where the value would overflow 64 bits.
TEST(ReadDecimal, RefusesWhatExceedsMaxAndLeavesPAlone) {
    struct Case {
        const char* text;
        std::uint64_t max;
        bool ok;
    };
    for (const Case& c : {Case{"999999999", 999'999'999, true}, Case{"1000000000", 999'999'999, false},
                          Case{"2147483647", INT32_MAX, true}, Case{"2147483648", INT32_MAX, false},
                          Case{"9223372036854775807", INT64_MAX, true}, Case{"9223372036854775808", INT64_MAX, false},
                          Case{"18446744073709551615", UINT64_MAX, true}, Case{"18446744073709551616", UINT64_MAX, false},
                          Case{"99999999999999999999999", UINT64_MAX, false}}) {
        const char* p = c.text;
        std::uint64_t v = 42;
        EXPECT_EQ(read_decimal(p, c.max, v), c.ok) << c.text;
        if (c.ok) {
            EXPECT_EQ(std::to_string(v), c.text);
            EXPECT_EQ(*p, '\0');
        } else {
            EXPECT_EQ(p, c.text) << c.text;
            EXPECT_EQ(v, 42u) << c.text;
        }
    }
}

TEST(ReadDecimal, RefusesWhatDoesNotStartWithADigit) {
    for (const char* bad : {"", " 1", "-1", "+1", "x1", "."}) {
        const char* p = bad;
        std::uint64_t v = 42;
        EXPECT_FALSE(read_decimal(p, UINT64_MAX, v)) << '"' << bad << '"';
        EXPECT_EQ(p, bad);
        EXPECT_EQ(v, 42u);
    }
}
