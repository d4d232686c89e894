#include <gtest/gtest.h>

#include "core/cpuset.hpp"

using stacksage::Cpuset;

TEST(Cpuset, ParsesAndPrintsListForm) {
    auto c = Cpuset::parse_list("0-7,16-23");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->count(), 16u);
    EXPECT_EQ(c->to_list_string(), "0-7,16-23");
    EXPECT_EQ(Cpuset::parse_list(" 3 , 1,2 ,9")->to_list_string(), "1-3,9");
    EXPECT_EQ(Cpuset::parse_list("")->to_list_string(), "");
    EXPECT_EQ(Cpuset::parse_list("63-65")->to_list_string(), "63-65");
    EXPECT_EQ(Cpuset::parse_list("5-5")->to_list_string(), "5");
}

TEST(Cpuset, RefusesMalformedLists) {
    for (const char* bad : {"7-3", "-1", "a", "1,,2", "1-", "0x3", "1 2", "99999999999"})
        EXPECT_FALSE(Cpuset::parse_list(bad)) << bad;
}

TEST(Cpuset, ParsesHwlocMasks) {
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0x000000ff")->to_list_string(), "0-7");
    // Most significant word first, as hwloc writes them.
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0x00000003,0xffffffff")->to_list_string(), "0-33");
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0x1,0x0,0x0")->to_list_string(), "64");
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0xffffffffff")->to_list_string(), "0-39");
    // hwloc writes zero words as nothing.
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0x00000001,,0x01000000")->to_list_string(), "24,64");
    EXPECT_FALSE(Cpuset::parse_hwloc_mask("0x1,"));
    EXPECT_EQ(Cpuset::parse_hwloc_mask("0x0")->count(), 0u);
    EXPECT_FALSE(Cpuset::parse_hwloc_mask("0xf...f"));
    EXPECT_FALSE(Cpuset::parse_hwloc_mask("0xzz"));
    EXPECT_FALSE(Cpuset::parse_hwloc_mask(""));
    EXPECT_EQ(Cpuset::parse("0x5")->to_list_string(), "0,2");
    EXPECT_EQ(Cpuset::parse("0,2")->to_list_string(), "0,2");
}

TEST(Cpuset, HwlocMaskRoundTrip) {
    auto c = *Cpuset::parse_list("0-3,40,100-130");
    auto mask = c.to_hwloc_mask();
    EXPECT_EQ(*Cpuset::parse_hwloc_mask(mask), c);
    EXPECT_EQ(Cpuset::parse_list("0-7")->to_hwloc_mask(), "0x000000ff");
    EXPECT_EQ(Cpuset().to_hwloc_mask(), "0x0");
}

TEST(Cpuset, SetAlgebra) {
    auto a = *Cpuset::parse_list("0-7");
    auto b = *Cpuset::parse_list("4-11");
    EXPECT_EQ((a | b).to_list_string(), "0-11");
    EXPECT_EQ((a & b).to_list_string(), "4-7");
    EXPECT_EQ((a - b).to_list_string(), "0-3");
    EXPECT_EQ((a ^ b).to_list_string(), "0-3,8-11");
    EXPECT_TRUE(a.intersects(b));
    EXPECT_FALSE(a.intersects(*Cpuset::parse_list("8-9")));
    EXPECT_TRUE(Cpuset::parse_list("1-2")->is_subset_of(a));
    EXPECT_FALSE(b.is_subset_of(a));
    EXPECT_TRUE(Cpuset().is_subset_of(a));
    // Equal sets compare equal whatever their history of sizes.
    auto c = *Cpuset::parse_list("0-7,200");
    c.clear(200);
    EXPECT_EQ(c, a);
}

TEST(Cpuset, IterationAndQueries) {
    auto c = *Cpuset::parse_list("1,5,63,64,130");
    std::vector<unsigned> seen(c.begin(), c.end());
    EXPECT_EQ(seen, (std::vector<unsigned>{1, 5, 63, 64, 130}));
    EXPECT_EQ(*c.first(), 1u);
    EXPECT_EQ(*c.next(5), 63u);
    EXPECT_EQ(*c.next(63), 64u);
    EXPECT_FALSE(c.next(130));
    EXPECT_EQ(c.end_index(), 131u);
    EXPECT_TRUE(c.contains(64));
    EXPECT_FALSE(c.contains(2));
    EXPECT_FALSE(c.contains(100000));
    EXPECT_FALSE(Cpuset().first());
    EXPECT_EQ(Cpuset::range(60, 70).count(), 11u);
    EXPECT_EQ(Cpuset::range(0, 63).to_list_string(), "0-63");
}
