// The walk of a hash table's used entries (the sampling summary at exit)
// reads the bitmap of used slots, not the pages of the free ones: every page
// read in fresh anonymous memory is a page fault in the application's
// process, and the per-thread access tables, the site table and the object
// table hold about a thousand such pages. Checked with mincore(): a page the
// walk read is resident (the zero page mapped), one it skipped is not.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <vector>

#include "preload/sampling/access_table.hpp"
#include "preload/sampling/object_table.hpp"
#include "preload/sampling/site_table.hpp"
#include "preload/sampling/slot_bitmap.hpp"

namespace stacksage::sampling {
namespace {

// Fresh anonymous memory, as the sampler maps it; unmapped at the end.
struct FreshMemory {
    explicit FreshMemory(std::size_t n) : bytes(n) {
        base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    ~FreshMemory() { ::munmap(base, bytes); }
    std::size_t resident_pages() const {
        const long page = ::sysconf(_SC_PAGESIZE);
        std::vector<unsigned char> in_core((bytes + static_cast<std::size_t>(page) - 1) / static_cast<std::size_t>(page));
        if (::mincore(base, bytes, in_core.data()) != 0) return ~std::size_t{0};
        std::size_t n = 0;
        for (unsigned char c : in_core) n += c & 1;
        return n;
    }
    void* base = MAP_FAILED;
    std::size_t bytes;
};

TEST(SlotBitmap, VisitsTheMarkedSlotsOnceInOrder) {
    FreshMemory memory(SlotBitmap::bytes_for(300));
    ASSERT_NE(memory.base, MAP_FAILED);
    SlotBitmap bits;
    bits.init_zeroed(memory.base, 300);
    for (std::uint32_t slot : {299u, 0u, 63u, 64u, 128u, 63u}) bits.mark(slot);
    std::vector<std::uint32_t> seen;
    bits.for_each([&](std::uint32_t slot) { seen.push_back(slot); });
    EXPECT_EQ(seen, (std::vector<std::uint32_t>{0, 63, 64, 128, 299}));
}

TEST(SlotBitmap, TheAccessTablesWalkReadsOnlyThePagesOfItsEntries) {
    constexpr std::uint32_t kCapacity = 4096;  // a thread's table: 168 pages
    FreshMemory memory(AccessTable::bytes_for(kCapacity));
    ASSERT_NE(memory.base, MAP_FAILED);
    AccessTable table;
    table.init_zeroed(memory.base, kCapacity);
    std::set<std::uint32_t> cpus = {1, 7, 42};
    for (std::uint32_t cpu : cpus) {
        AccessKey key;
        key.backend = Backend::PageFault;
        key.cpu = cpu;
        table.add(key, 0);
    }
    const std::size_t after_adds = memory.resident_pages();
    ASSERT_LE(after_adds, 2 * cpus.size() + 1);  // an entry may straddle two pages; the bitmap's page
    std::set<std::uint32_t> seen;
    table.for_each([&](const AccessKey& k, const AccessEntry& e) {
        seen.insert(k.cpu);
        EXPECT_EQ(e.count, 1u);
    });
    EXPECT_EQ(seen, cpus);
    EXPECT_EQ(memory.resident_pages(), after_adds) << "the walk read pages of free slots";

    // merge() walks the same way.
    FreshMemory totals_memory(AccessTable::bytes_for(kCapacity));
    AccessTable totals;
    totals.init_zeroed(totals_memory.base, kCapacity);
    totals.merge(table);
    totals.merge(table);
    EXPECT_EQ(totals.size(), cpus.size());
    EXPECT_EQ(totals.total(), 2 * cpus.size());
    EXPECT_EQ(memory.resident_pages(), after_adds);
}

TEST(SlotBitmap, TheSiteAndObjectTablesWalksReadOnlyThePagesOfTheirEntries) {
    constexpr std::uint32_t kSites = 8192, kObjects = 4096;
    FreshMemory site_memory(SiteTable::bytes_for(kSites, 16, 4096));
    FreshMemory object_memory(ObjectTable::bytes_for(kObjects));
    ASSERT_NE(site_memory.base, MAP_FAILED);
    ASSERT_NE(object_memory.base, MAP_FAILED);
    SiteTable sites;
    sites.init_zeroed(site_memory.base, kSites, 16, 4096);
    ObjectTable objects;
    objects.init_zeroed(object_memory.base, kObjects);
    const std::uint64_t frames[2] = {0x401000, 0x402000};
    const std::int32_t a = sites.intern(0x400100, frames, 2, Unwind::Callchain, 3);
    const std::int32_t b = sites.intern(0x400200, frames, 1, Unwind::Callchain, 1);
    const std::int32_t heap = objects.intern(ObjectKind::Heap, a, 0);
    const std::int32_t stack = objects.intern(ObjectKind::Stack, -1, 1234);
    ASSERT_GE(a, 0);
    ASSERT_GE(b, 0);
    ASSERT_GE(heap, 0);
    ASSERT_GE(stack, 0);
    const std::size_t sites_before = site_memory.resident_pages(), objects_before = object_memory.resident_pages();

    std::set<std::int32_t> site_ids, object_ids;
    sites.for_each([&](std::int32_t id, const SiteEntry& e) {
        site_ids.insert(id);
        EXPECT_EQ(e.samples.load(), id == a ? 3u : 1u);
    });
    objects.for_each([&](std::int32_t id, const ObjectEntry& e) {
        object_ids.insert(id);
        EXPECT_EQ(e.kind, id == heap ? ObjectKind::Heap : ObjectKind::Stack);
    });
    EXPECT_EQ(site_ids, (std::set<std::int32_t>{a, b}));
    EXPECT_EQ(object_ids, (std::set<std::int32_t>{heap, stack}));
    EXPECT_EQ(site_memory.resident_pages(), sites_before) << "the walk read pages of free site slots";
    EXPECT_EQ(object_memory.resident_pages(), objects_before) << "the walk read pages of free object slots";
}

}  // namespace
}  // namespace stacksage::sampling
