// PodArray: owned (malloc'ed, grown with realloc) or borrowed storage.
#include <gtest/gtest.h>

#include <string>

#include "core/pod_array.hpp"

using stacksage::PodArray;

namespace {

struct WithDefaults {
    std::uint32_t a = 7;
    std::uint32_t b = 0xffffffffu;
};

TEST(PodArray, GrowsKeepingEveryElement) {
    PodArray<std::uint64_t> a;
    for (std::uint64_t i = 0; i < 100000; ++i) a.push_back(i * 3);
    ASSERT_EQ(a.size(), 100000u);
    EXPECT_GE(a.capacity(), a.size());
    for (std::uint64_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], i * 3);
}

TEST(PodArray, PushingOneOfItsOwnElementsWhileGrowing) {
    PodArray<std::uint32_t> a;
    a.push_back(41);
    for (int i = 0; i < 1000; ++i) a.push_back(a[0]);  // the reference outlives no growth
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], 41u);
}

TEST(PodArray, AppendingARangeOfItselfWhileGrowing) {
    PodArray<char> a;
    const std::string hello = "hello";
    a.append(hello.data(), hello.data() + hello.size());
    for (int i = 0; i < 12; ++i) a.append(a.data(), a.data() + a.size());  // doubles, moves
    ASSERT_EQ(a.size(), 5u << 12);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], hello[i % 5]);
}

TEST(PodArray, ResizeValueInitialisesNewElements) {
    PodArray<WithDefaults> a;
    a.resize(3);
    EXPECT_EQ(a[2].a, 7u);
    EXPECT_EQ(a[2].b, 0xffffffffu);
    a.emplace_back(WithDefaults{1, 2});
    EXPECT_EQ(a.back().a, 1u);
}

TEST(PodArray, BorrowedCopiesOnlyWhenMadeOwned) {
    const std::uint32_t image[] = {1, 2, 3};
    PodArray<std::uint32_t> a;
    a.push_back(9);
    a.borrow(image, 3);
    EXPECT_TRUE(a.borrowed());
    EXPECT_EQ(a.data(), image);
    PodArray<std::uint32_t> copy = a;  // a borrowed array's copy borrows too
    EXPECT_EQ(copy.data(), image);
    a.make_owned();
    EXPECT_FALSE(a.borrowed());
    EXPECT_NE(a.data(), image);
    a.push_back(4);
    EXPECT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0], 1u);
    EXPECT_EQ(a[3], 4u);
    EXPECT_EQ(image[2], 3u);
}

TEST(PodArray, CopyAndMoveOwnTheirElements) {
    PodArray<int> a;
    for (int i = 0; i < 10; ++i) a.push_back(i);
    PodArray<int> b = a;
    b[0] = 100;
    EXPECT_EQ(a[0], 0);
    PodArray<int> c = std::move(b);
    EXPECT_EQ(c[0], 100);
    EXPECT_EQ(c.size(), 10u);
    EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move): a moved-from array is empty
    b.push_back(5);          // and usable
    EXPECT_EQ(b[0], 5);
    c.clear();
    EXPECT_TRUE(c.empty());
    EXPECT_GE(c.capacity(), 10u);  // clear keeps the storage
}

}  // namespace
