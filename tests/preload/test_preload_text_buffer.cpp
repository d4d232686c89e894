// TextBuffer's numbers: decimal (zero-padded on request), signed, and hex,
// at their extremes, through the digit writers every event line uses.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>

#include "preload/text.hpp"

using stacksage::TextBuffer;

namespace {

std::string uint_text(std::uint64_t v, int min_digits = 1) {
    char buf[64];
    TextBuffer(buf, sizeof buf).add_uint(v, min_digits);
    return buf;
}

}  // namespace

TEST(TextBuffer, DecimalsAreWhatPrintfWrites) {
    for (std::uint64_t v : {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{10}, std::uint64_t{99},
                            std::uint64_t{100}, std::uint64_t{123456789}, std::numeric_limits<std::uint64_t>::max()}) {
        char expected[32];
        std::snprintf(expected, sizeof expected, "%llu", static_cast<unsigned long long>(v));
        EXPECT_EQ(uint_text(v), expected);
    }
}

TEST(TextBuffer, MinDigitsPadsWithZerosUpTo24Characters) {
    EXPECT_EQ(uint_text(3, 4), "0003");
    EXPECT_EQ(uint_text(5, 2), "05");
    EXPECT_EQ(uint_text(12345, 2), "12345");
    EXPECT_EQ(uint_text(0, 0), "0");
    EXPECT_EQ(uint_text(1, 100), std::string(23, '0') + "1");
    EXPECT_EQ(uint_text(std::numeric_limits<std::uint64_t>::max(), 30), "0000" "18446744073709551615");
}

TEST(TextBuffer, SignedAndHex) {
    char buf[64];
    TextBuffer t(buf, sizeof buf);
    t.add_int(-42).add(" ").add_int(std::numeric_limits<std::int64_t>::min()).add(" ").add_int(17);
    EXPECT_STREQ(buf, "-42 -9223372036854775808 17");
    t.clear();
    t.add_hex(0).add(" ").add_hex(0x1f).add(" ").add_hex(std::numeric_limits<std::uint64_t>::max());
    EXPECT_STREQ(buf, "0x0 0x1f 0xffffffffffffffff");
}

TEST(TextBuffer, ANumberThatDoesNotFitIsCutAndSaid) {
    char buf[4];
    TextBuffer t(buf, sizeof buf);
    t.add_uint(123456);
    EXPECT_STREQ(buf, "123");
    EXPECT_TRUE(t.truncated());
}
