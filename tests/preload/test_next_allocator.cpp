// The allocation interposers' helpers (preload/next_allocator.hpp,
// preload/sampling/tracked_block_filter.hpp): the next allocator resolved
// once, the bootstrap arena dlsym's allocations come from, and the filter
// free() goes through while tracking runs. The interposers themselves, on
// glibc, jemalloc and tcmalloc, are tested in real programs by
// tests/integration/test_preload_sampling.cpp.
#include <dlfcn.h>
#include <errno.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "preload/next_allocator.hpp"
#include "preload/sampling/tracked_block_filter.hpp"

namespace stacksage::preload {
namespace {

TEST(NextAllocator, IsTheNextDefinitionResolvedOnce) {
    const NextAllocator* next = next_allocator();
    ASSERT_NE(next, nullptr);
    EXPECT_EQ(next_allocator(), next) << "resolved once, the same table after";
    // This test links no allocator of its own: the next malloc is glibc's.
    EXPECT_EQ(reinterpret_cast<void*>(next->malloc), dlsym(RTLD_NEXT, "malloc"));
    EXPECT_EQ(reinterpret_cast<void*>(next->free), dlsym(RTLD_NEXT, "free"));
    void* p = next->malloc(100);
    ASSERT_NE(p, nullptr);
    next->free(p);
    void* q = nullptr;
#if !defined(__SANITIZE_ADDRESS__)
    // (ASan's posix_memalign reports an invalid alignment as an error, by design.)
    EXPECT_EQ(next->posix_memalign(&q, 3, 10), EINVAL);
#endif
    EXPECT_EQ(next->posix_memalign(&q, 4096, 10), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 4096, 0u);
    next->free(q);
}

TEST(NextAllocator, TheAllocatorsImageIsItsLibraryNotTheProgram) {
    note_allocator_image();
    const NextAllocator* next = next_allocator();
    EXPECT_TRUE(in_allocator_image(reinterpret_cast<std::uint64_t>(next->malloc)));
    EXPECT_FALSE(in_allocator_image(reinterpret_cast<std::uint64_t>(&note_allocator_image)));
}

TEST(BootstrapArena, BlocksAreAlignedZeroedAndOnlyItsOwn) {
    auto* p = static_cast<unsigned char*>(bootstrap_allocate(100));
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(in_bootstrap_arena(p));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    for (int i = 0; i < 100; ++i) ASSERT_EQ(p[i], 0) << "calloc relies on zeroes";
    void* aligned = bootstrap_allocate(10, 4096);
    ASSERT_NE(aligned, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 4096, 0u);
    int on_stack = 0;
    void* heap = next_allocator()->malloc(8);
    EXPECT_FALSE(in_bootstrap_arena(&on_stack));
    EXPECT_FALSE(in_bootstrap_arena(heap));
    EXPECT_FALSE(in_bootstrap_arena(nullptr));
    next_allocator()->free(heap);
}

TEST(BootstrapArena, ReallocCopiesABlockOutToTheAllocator) {
    auto* p = static_cast<char*>(bootstrap_allocate(32));
    ASSERT_NE(p, nullptr);
    std::strcpy(p, "from the arena");
    auto* grown = static_cast<char*>(bootstrap_reallocate(p, 4096));
    ASSERT_NE(grown, nullptr);
    EXPECT_FALSE(in_bootstrap_arena(grown));
    EXPECT_STREQ(grown, "from the arena");
    auto* shrunk = static_cast<char*>(bootstrap_reallocate(p, 4));
    ASSERT_NE(shrunk, nullptr);
    EXPECT_EQ(std::memcmp(shrunk, "from", 4), 0);
    next_allocator()->free(grown);
    next_allocator()->free(shrunk);
}

TEST(BootstrapArena, ASpentArenaFailsWithEnomem) {
    errno = 0;
    EXPECT_EQ(bootstrap_allocate(std::size_t{1} << 20), nullptr);
    EXPECT_EQ(errno, ENOMEM);
    errno = 0;
    void* last = nullptr;
    while (void* p = bootstrap_allocate(4096)) last = p;
    EXPECT_NE(last, nullptr);
    EXPECT_EQ(errno, ENOMEM) << "the arena runs out, never past its end";
}

using sampling::TrackedBlockFilter;

TEST(TrackedBlockFilter, HoldsWhatWasAddedUntilRemoved) {
    static TrackedBlockFilter filter;
    // 1024 large blocks as glibc places them (a page boundary + 16) and as
    // jemalloc does (2 MiB boundaries).
    for (std::uint64_t i = 0; i < 512; ++i) {
        filter.add(reinterpret_cast<void*>(0x7f0000000010ull + i * 0x101000));
        filter.add(reinterpret_cast<void*>(0x7e0000000000ull + i * 0x200000));
    }
    for (std::uint64_t i = 0; i < 512; ++i) {
        EXPECT_TRUE(filter.may_hold(reinterpret_cast<void*>(0x7f0000000010ull + i * 0x101000)));
        EXPECT_TRUE(filter.may_hold(reinterpret_cast<void*>(0x7e0000000000ull + i * 0x200000)));
    }
    // Small blocks on 10,000 other pages: most are certainly not tracked (one load).
    int maybe = 0;
    for (std::uint64_t i = 0; i < 10000; ++i) maybe += filter.may_hold(reinterpret_cast<void*>(0x5555000000ull + i * 4144));
    EXPECT_LT(maybe, 10000 * 30 / 100) << "at most 1024 of 4096 slots held: about a quarter may be";
    // Small blocks of one page share a slot (and its cache line).
    EXPECT_EQ(filter.may_hold(reinterpret_cast<void*>(0x5555000040ull)), filter.may_hold(reinterpret_cast<void*>(0x5555000f00ull)));
    for (std::uint64_t i = 0; i < 512; ++i) {
        filter.remove(reinterpret_cast<void*>(0x7f0000000010ull + i * 0x101000));
        filter.remove(reinterpret_cast<void*>(0x7e0000000000ull + i * 0x200000));
    }
    for (std::uint64_t i = 0; i < 512; ++i) {
        EXPECT_FALSE(filter.may_hold(reinterpret_cast<void*>(0x7f0000000010ull + i * 0x101000)));
        EXPECT_FALSE(filter.may_hold(reinterpret_cast<void*>(0x7e0000000000ull + i * 0x200000)));
    }
}

TEST(TrackedBlockFilter, AnEmptyFilterHoldsNothingAndClearEmptiesIt) {
    static TrackedBlockFilter filter;
    int value = 0;
    EXPECT_FALSE(filter.may_hold(&value));
    filter.add(&value);
    filter.add(&value);
    filter.remove(&value);
    EXPECT_TRUE(filter.may_hold(&value)) << "added twice, removed once";
    filter.clear();
    EXPECT_FALSE(filter.may_hold(&value));
}

}  // namespace
}  // namespace stacksage::preload
