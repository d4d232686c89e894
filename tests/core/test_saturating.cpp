// Sums and differences that hold at the ends of the 64-bit range (core/saturating.hpp).
#include <gtest/gtest.h>

#include <limits>

#include "core/saturating.hpp"

using namespace stacksage;

namespace {
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
}  // namespace

TEST(Saturating, AddIsExactInRangeAndHoldsAtTheEnds) {
    EXPECT_EQ(add_saturating(2, 3), 5);
    EXPECT_EQ(add_saturating(-2, 3), 1);
    EXPECT_EQ(add_saturating(kMax, 0), kMax);
    EXPECT_EQ(add_saturating(kMax, 1), kMax);
    EXPECT_EQ(add_saturating(kMax, kMax), kMax);
    EXPECT_EQ(add_saturating(kMin, -1), kMin);
    EXPECT_EQ(add_saturating(kMin, kMin), kMin);
    EXPECT_EQ(add_saturating(kMin, kMax), -1);
}

TEST(Saturating, SubtractIsExactInRangeAndHoldsAtTheEnds) {
    EXPECT_EQ(subtract_saturating(5, 3), 2);
    EXPECT_EQ(subtract_saturating(3, 5), -2);
    EXPECT_EQ(subtract_saturating(5, -5), 10);
    EXPECT_EQ(subtract_saturating(kMax, kMin), kMax);
    EXPECT_EQ(subtract_saturating(kMax, -1), kMax);
    EXPECT_EQ(subtract_saturating(kMax, kMax), 0);
    EXPECT_EQ(subtract_saturating(kMin, 1), kMin);
    EXPECT_EQ(subtract_saturating(kMin, kMax), kMin);
    EXPECT_EQ(subtract_saturating(kMin, kMin), 0);
    EXPECT_EQ(subtract_saturating(-1, kMin), kMax);
    EXPECT_EQ(subtract_saturating(0, kMin), kMax);
}
