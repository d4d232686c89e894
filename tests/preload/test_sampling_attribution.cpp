// Code and data attribution (preload/sampling/code_data_attribution.hpp):
// the call chain, user registers and stack decoded from records built to
// the kernel's documented layout (linux/perf_event.h, "PERF_RECORD_SAMPLE";
// there is no PMU here), the call path and its completeness, the site,
// object and block tables, the mappings read from /proc/<pid>/maps text,
// and a sample attributed end to end to a tracked block and its site.
#include <gtest/gtest.h>

#include <linux/perf_event.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "preload/sampling/access_table.hpp"
#include "preload/sampling/block_table.hpp"
#include "preload/sampling/call_path.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/sampling/mapping_table.hpp"
#include "preload/sampling/object_table.hpp"
#include "preload/sampling/sample_record.hpp"
#include "preload/sampling/site_table.hpp"
#include "preload/sampling/spin_lock.hpp"
#include "preload/sampling/static_symbols.hpp"
#include "preload/sampling/user_registers.hpp"

using namespace stacksage::sampling;

namespace {

class Body {
public:
    Body& u64(std::uint64_t v) { return put(&v, 8); }
    Body& u32x2(std::uint32_t a, std::uint32_t b) { return u64(a | std::uint64_t{b} << 32); }
    Body& bytes(const std::vector<unsigned char>& b) {
        body_.insert(body_.end(), b.begin(), b.end());
        return *this;
    }
    Body& weight_struct(std::uint32_t var1, std::uint16_t var2, std::uint16_t var3) {
        put(&var1, 4);
        put(&var2, 2);
        return put(&var3, 2);
    }
    const std::vector<unsigned char>& data() const { return body_; }

private:
    Body& put(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        body_.insert(body_.end(), b, b + n);
        return *this;
    }
    std::vector<unsigned char> body_;
};

constexpr std::uint64_t kAttributedType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                          PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                                          PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER |
                                          PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;

// A sample as the kernel writes it with a call chain, the user registers
// (in increasing bit order of the mask) and a stack copy.
Body attributed_sample(const std::vector<std::uint64_t>& chain, const std::vector<unsigned char>& stack,
                       std::uint64_t dyn_size) {
    Body b;
    b.u64(42).u64(0x401000).u32x2(100, 101).u64(5000).u64(0x7f0000002000).u32x2(3, 0);
    b.u64(chain.size());
    for (std::uint64_t v : chain) b.u64(v);
    b.u64(PERF_SAMPLE_REGS_ABI_64);
    // The mask's registers, lowest bit first.
    for (unsigned bit = 0; bit < 64; ++bit) {
        if ((kUserRegisterMask & (std::uint64_t{1} << bit)) == 0) continue;
        b.u64(bit == kUserRegIp ? 0x401000 : bit == kUserRegSp ? 0x7ffd0000 : 0x7ffd0040);
    }
    b.u64(stack.size());
    if (!stack.empty()) b.bytes(stack).u64(dyn_size);
    b.weight_struct(250, 7, 0).u64(0x1234);
    return b;
}

}  // namespace

TEST(SamplingAttributionRecord, CallChainRegistersAndStackInTheKernelsOrder) {
    if (!kUserRegistersKnown) GTEST_SKIP() << "no user register numbers for this architecture";
    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kAttributedType, kUserRegisterMask));
    std::vector<unsigned char> stack(32);
    for (std::size_t i = 0; i < stack.size(); ++i) stack[i] = static_cast<unsigned char>(i);
    const std::uint64_t user = static_cast<std::uint64_t>(PERF_CONTEXT_USER);
    const Body b = attributed_sample({user, 0x401000, 0x401234, 0x402000}, stack, 24);
    SampleRecord r;
    ASSERT_TRUE(layout.decode(b.data().data(), b.data().size(), r));
    EXPECT_EQ(r.id, 42u);
    EXPECT_EQ(r.ip, 0x401000u);
    EXPECT_EQ(r.addr, 0x7f0000002000u);
    EXPECT_EQ(r.cpu, 3u);
    ASSERT_EQ(r.callchain_nr, 4u);
    EXPECT_EQ(r.callchain_at(0), user);
    EXPECT_EQ(r.callchain_at(2), 0x401234u);
    EXPECT_EQ(r.regs_abi, static_cast<std::uint64_t>(PERF_SAMPLE_REGS_ABI_64));
    EXPECT_EQ(r.reg_ip, 0x401000u);
    EXPECT_EQ(r.reg_sp, 0x7ffd0000u);
    EXPECT_EQ(r.reg_bp, 0x7ffd0040u);
    ASSERT_EQ(r.stack_size, 32u);
    EXPECT_EQ(r.stack_dyn_size, 24u);
    EXPECT_EQ(std::memcmp(r.stack, stack.data(), 32), 0);
    // The fixed fields after the variable part are found past it.
    EXPECT_EQ(r.weight, 250u);
    EXPECT_EQ(r.weight_var2, 7u);
    EXPECT_EQ(r.data_src, 0x1234u);

    // Cut anywhere: never read past the body.
    for (std::size_t len = 0; len < b.data().size(); len += 8)
        EXPECT_FALSE(layout.decode(b.data().data(), len, r)) << len;
}

TEST(SamplingAttributionRecord, NoRegistersAndAnEmptyStack) {
    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kAttributedType, kUserRegisterMask));
    // A kernel thread's sample: ABI_NONE (no registers follow), size 0 (no data, no dyn_size).
    Body b;
    b.u64(1).u64(2).u32x2(3, 4).u64(5).u64(6).u32x2(7, 0);
    b.u64(0);                          // no chain
    b.u64(PERF_SAMPLE_REGS_ABI_NONE);  // no registers
    b.u64(0);                          // no stack
    b.weight_struct(9, 0, 0).u64(0x77);
    SampleRecord r;
    ASSERT_TRUE(layout.decode(b.data().data(), b.data().size(), r));
    EXPECT_EQ(r.callchain_nr, 0u);
    EXPECT_EQ(r.regs_abi, 0u);
    EXPECT_EQ(r.stack, nullptr);
    EXPECT_EQ(r.weight, 9u);
    EXPECT_EQ(r.data_src, 0x77u);
    // A chain longer than the body is refused.
    Body lying;
    lying.u64(1).u64(2).u32x2(3, 4).u64(5).u64(6).u32x2(7, 0).u64(1000).u64(0).u64(0).u64(0).u64(0);
    EXPECT_FALSE(layout.decode(lying.data().data(), lying.data().size(), r));
}

TEST(SamplingAttributionCallPath, CompleteOnlyWhenEveryReturnAddressIsCode) {
    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kAttributedType, kUserRegisterMask));
    const std::uint64_t user = static_cast<std::uint64_t>(PERF_CONTEXT_USER);
    const auto code = [](std::uint64_t a) { return a >= 0x400000 && a < 0x500000; };
    std::uint64_t frames[kMaxSiteFrames];
    SampleRecord r;

    // Frame pointers: ip, then return addresses in code.
    Body fp = attributed_sample({user, 0x401000, 0x401234, 0x402000}, {}, 0);
    ASSERT_TRUE(layout.decode(fp.data().data(), fp.data().size(), r));
    CallPath p = user_call_path(r, frames, kMaxSiteFrames, code);
    EXPECT_TRUE(p.complete);
    ASSERT_EQ(p.nframes, 2u);
    EXPECT_EQ(frames[0], 0x401234u);
    EXPECT_EQ(frames[1], 0x402000u);

    // No frame pointers: nothing after the ip, or a value that is no code.
    Body none = attributed_sample({user, 0x401000}, {}, 0);
    ASSERT_TRUE(layout.decode(none.data().data(), none.data().size(), r));
    EXPECT_FALSE(user_call_path(r, frames, kMaxSiteFrames, code).complete);
    Body garbage = attributed_sample({user, 0x401000, 0x401234, 0x7ffd1234, 0x401000}, {}, 0);
    ASSERT_TRUE(layout.decode(garbage.data().data(), garbage.data().size(), r));
    p = user_call_path(r, frames, kMaxSiteFrames, code);
    EXPECT_FALSE(p.complete);
    EXPECT_EQ(p.nframes, 1u) << "the real return addresses before the first that is not code";

    // A leaf without its own frame: its return address is on top of the
    // stack, and the chain starts at its caller's caller.
    std::vector<unsigned char> stack(16, 0);
    const std::uint64_t leaf_return = 0x401500;
    std::memcpy(stack.data(), &leaf_return, 8);
    Body leaf = attributed_sample({user, 0x401000, 0x402000}, stack, 16);
    ASSERT_TRUE(layout.decode(leaf.data().data(), leaf.data().size(), r));
    p = user_call_path(r, frames, kMaxSiteFrames, code);
    EXPECT_TRUE(p.complete);
    ASSERT_EQ(p.nframes, 2u);
    EXPECT_EQ(frames[0], leaf_return);
    EXPECT_EQ(frames[1], 0x402000u);
    // A function with a frame has no code address on top: nothing added.
    std::vector<unsigned char> data_top(16, 0x11);
    Body framed = attributed_sample({user, 0x401000, 0x402000}, data_top, 16);
    ASSERT_TRUE(layout.decode(framed.data().data(), framed.data().size(), r));
    p = user_call_path(r, frames, kMaxSiteFrames, code);
    EXPECT_EQ(p.nframes, 1u);
}

namespace {
struct SiteMemory {
    explicit SiteMemory(std::uint32_t capacity, std::uint32_t stacks, std::uint32_t stack_bytes)
        : memory(std::calloc(1, SiteTable::bytes_for(capacity, stacks, stack_bytes))) {
        table.init_zeroed(memory, capacity, stacks, stack_bytes);
    }
    ~SiteMemory() { std::free(memory); }
    void* memory;
    SiteTable table;
};
}  // namespace

TEST(SamplingAttributionSites, OneIdPerIpAndCallPath) {
    SiteMemory m(64, 4, 64);
    SiteTable& t = m.table;
    const std::uint64_t a[] = {0x401234, 0x402000}, b[] = {0x401300, 0x402000};
    const std::int32_t s1 = t.intern(0x401000, a, 2, Unwind::Callchain, 1);
    const std::int32_t s2 = t.intern(0x401000, b, 2, Unwind::Callchain, 1);
    const std::int32_t s3 = t.intern(0x401000, a, 2, Unwind::Callchain, 5);
    ASSERT_GE(s1, 0);
    EXPECT_NE(s1, s2) << "same ip, other caller: another site";
    EXPECT_EQ(s1, s3);
    const SiteEntry* e = t.site(s1);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->ip, 0x401000u);
    ASSERT_EQ(e->nframes, 2u);
    EXPECT_EQ(e->frames[1], 0x402000u);
    EXPECT_EQ(e->samples.load(), 6u);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.unwind_of(*e), Unwind::Callchain);
}

TEST(SamplingAttributionSites, BoundedTableAndOneStackCopyPerSite) {
    SiteMemory m(16, 2, 64);
    SiteTable& t = m.table;
    // Kept below 3/4 full: 12 sites, then dropped and counted.
    int kept = 0;
    for (std::uint64_t ip = 1; ip <= 20; ++ip)
        if (t.intern(ip, nullptr, 0, Unwind::Stack, 1) >= 0) ++kept;
    EXPECT_EQ(kept, 12);
    EXPECT_EQ(t.dropped(), 8u);

    unsigned char stack[100];
    for (int i = 0; i < 100; ++i) stack[i] = static_cast<unsigned char>(i);
    const std::int32_t s1 = t.intern(1, nullptr, 0, Unwind::Stack, 1);
    EXPECT_TRUE(t.wants_stack(s1));
    EXPECT_TRUE(t.keep_stack(s1, 0x401000, 0x7ffd0000, 0x7ffd0040, stack, sizeof stack));
    EXPECT_FALSE(t.wants_stack(s1));
    EXPECT_FALSE(t.keep_stack(s1, 0, 0, 0, stack, sizeof stack)) << "the first copy stays";
    const StackCopy* c = t.stack_of(*t.site(s1));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->sp, 0x7ffd0000u);
    EXPECT_EQ(c->size, 64u) << "cut to the pool's stride";
    EXPECT_EQ(c->data[63], 63);
    EXPECT_EQ(t.unwind_of(*t.site(s1)), Unwind::Stack);
    // The pool holds 2: the third site that wants one is counted, says "none".
    EXPECT_TRUE(t.keep_stack(t.intern(2, nullptr, 0, Unwind::Stack, 1), 0, 0, 0, stack, 8));
    const std::int32_t s3 = t.intern(3, nullptr, 0, Unwind::Stack, 1);
    EXPECT_FALSE(t.keep_stack(s3, 0, 0, 0, stack, 8));
    EXPECT_EQ(t.stacks(), 2u);
    EXPECT_EQ(t.stacks_dropped(), 1u);
    EXPECT_EQ(t.unwind_of(*t.site(s3)), Unwind::None);
}

TEST(SamplingAttributionObjects, OneObjectPerKindAndReference) {
    std::vector<unsigned char> memory(ObjectTable::bytes_for(64));
    ObjectTable t;
    t.init_zeroed(memory.data(), 64);
    const std::int32_t heap = t.intern(ObjectKind::Heap, 7, 0);
    EXPECT_EQ(t.intern(ObjectKind::Heap, 7, 0), heap);
    EXPECT_NE(t.intern(ObjectKind::Mmap, 7, 0), heap);
    EXPECT_NE(t.intern(ObjectKind::Stack, -1, 4711), t.intern(ObjectKind::Stack, -1, 4712));
    t.add_block(heap, 1 << 20);
    t.add_block(heap, 2 << 20);
    ASSERT_NE(t.object(heap), nullptr);
    EXPECT_EQ(t.object(heap)->kind, ObjectKind::Heap);
    EXPECT_EQ(t.object(heap)->ref, 7);
    EXPECT_EQ(t.object(heap)->blocks.load(), 2u);
    EXPECT_EQ(t.object(heap)->bytes.load(), 3u << 20);
}

TEST(SamplingAttributionBlocks, ASampleMatchesTheBlockThatHeldItsAddressThen) {
    auto t = std::make_unique<BlockTable>();
    ASSERT_TRUE(t->add(0x10000, 0x1000, 1, 100));
    EXPECT_EQ(t->find(0x10800, 150), 1);
    EXPECT_EQ(t->find(0x11000, 150), -1) << "one past the end";
    EXPECT_EQ(t->find(0x10800, 50), -1) << "before it was allocated";
    EXPECT_TRUE(t->mark_freed(0x10000, 200));
    EXPECT_FALSE(t->mark_freed(0x10000, 210)) << "freed once";
    EXPECT_EQ(t->find(0x10800, 150), 1) << "a sample taken before the free, drained after it";
    EXPECT_EQ(t->find(0x10800, 250), -1);
    // The address reused by another block.
    ASSERT_TRUE(t->add(0x10000, 0x2000, 2, 300));
    EXPECT_EQ(t->find(0x10800, 150), 1);
    EXPECT_EQ(t->find(0x10800, 350), 2);
    EXPECT_EQ(t->find(0x10800, 0), 2) << "time unknown: the live block";
    EXPECT_EQ(t->mark_unmapped(0x0, 0x20000, 400), 1u);
    EXPECT_EQ(t->live(), 0u);
}

TEST(SamplingAttributionBlocks, AFullTableReusesTheBlocksFreedLongestAgo) {
    auto t = std::make_unique<BlockTable>();
    for (std::uint32_t i = 0; i < BlockTable::kCapacity; ++i) ASSERT_TRUE(t->add(0x100000 + i * 0x1000, 0x1000, 1, 10));
    EXPECT_FALSE(t->add(0x900000000, 0x1000, 2, 20)) << "every block live";
    ASSERT_TRUE(t->mark_freed(0x100000 + 7 * 0x1000, 30));
    ASSERT_TRUE(t->mark_freed(0x100000 + 3 * 0x1000, 31));
    ASSERT_TRUE(t->add(0x900000000, 0x1000, 2, 40));
    EXPECT_EQ(t->find(0x900000800, 0), 2);
    EXPECT_EQ(t->find(0x100000 + 3 * 0x1000, 20), -1) << "its slot was the first freed one the reuse found";
    EXPECT_EQ(t->find(0x100000 + 7 * 0x1000, 20), 1) << "still there for samples drained late";
    ASSERT_TRUE(t->add(0x900010000, 0x1000, 3, 50));
    EXPECT_EQ(t->find(0x100000 + 7 * 0x1000, 20), -1);
    EXPECT_FALSE(t->add(0x900020000, 0x1000, 4, 60)) << "live again, all of them";
    EXPECT_EQ(t->live(), BlockTable::kCapacity);
}

TEST(SamplingAttributionBlocks, ALockNeverLetGoIsGivenUpNotWaitedOnForEver) {
    SpinLock lock;
    ASSERT_TRUE(lock.try_lock());  // a thread of the parent, gone in a forked child
    EXPECT_FALSE(lock.lock_for(3));
    {
        BoundedSpinGuard guard(lock, 3);
        EXPECT_FALSE(guard.held());
    }
    lock.reset();  // what the child does after fork
    BoundedSpinGuard guard(lock, 3);
    EXPECT_TRUE(guard.held());
}

namespace {
constexpr char kMaps[] =
    "55d0c0000000-55d0c0001000 r--p 00000000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0001000-55d0c0002000 r-xp 00001000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0003000-55d0c0004000 rw-p 00003000 08:01 1234                       /usr/bin/prog\n"
    "55d0c0004000-55d0c0804000 rw-p 00000000 00:00 0 \n"
    "55d0c1000000-55d0c1021000 rw-p 00000000 00:00 0                          [heap]\n"
    "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
    "7f0000010000-7f0000020000 r--p 00000000 08:01 99                         /out/vm/.node.events.1.tmp (deleted)\n"
    "7f1000000000-7f1000100000 r-xp 00028000 08:01 555                        /usr/lib/x86_64-linux-gnu/libc.so.6\n"
    "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n"
    "7ffd000fe000-7ffd00100000 r-xp 00000000 00:00 0                          [vdso]\n";
}  // namespace

TEST(SamplingAttributionMappings, FilesTheirBssAnonymousCodeAndTheVdso) {
    auto t = std::make_unique<MappingTable>();
    t->exclude_directory("/out/");
    t->add_maps_text(kMaps, sizeof kMaps - 1);
    // prog x3, its .bss, anonymous code, libc, vdso; not the heap, the stack
    // or the recorder's own file.
    ASSERT_EQ(t->count(), 7u);
    const Mapping& text = t->at(1);
    EXPECT_EQ(text.start, 0x55d0c0001000u);
    EXPECT_EQ(text.file_offset, 0x1000u);
    EXPECT_TRUE(text.executable);
    EXPECT_EQ(std::string(t->path(text), text.path_len), "/usr/bin/prog");
    const Mapping& bss = t->at(3);
    EXPECT_EQ(bss.start, 0x55d0c0004000u);
    EXPECT_EQ(std::string(t->path(bss), bss.path_len), "/usr/bin/prog") << "a file's .bss is the file's";
    EXPECT_EQ(bss.file_offset, 0x4000u) << "the offset the file would have there";
    EXPECT_EQ(t->at(4).kind, ModuleKind::AnonExec);
    EXPECT_EQ(t->at(6).kind, ModuleKind::Vdso);
    EXPECT_EQ(t->find(0x55d0c0004800), 3);
    EXPECT_EQ(t->find(0x55d0c1000800), -1) << "the heap is no module";
    EXPECT_TRUE(t->executable(0x7f1000000100));
    EXPECT_FALSE(t->executable(0x55d0c0000100));
    // A refresh adds only what is new.
    t->add_maps_text(kMaps, sizeof kMaps - 1);
    EXPECT_EQ(t->count(), 7u);
    const char more[] = "7f2000000000-7f2000001000 r-xp 00000000 08:01 77    /usr/lib/libnew.so\n";
    t->add_maps_text(more, sizeof more - 1);
    EXPECT_EQ(t->count(), 8u);
    EXPECT_TRUE(t->executable(0x7f2000000010));
}

TEST(SamplingAttributionMappings, TheLoadedImagesGetTheirBuildIds) {
    auto t = std::make_unique<MappingTable>();
    static char buffer[64 * 1024];
    ASSERT_TRUE(t->refresh(nullptr, buffer, sizeof buffer));
    t->read_build_ids();
    const auto own = reinterpret_cast<std::uint64_t>(&std::malloc);
    const std::int32_t i = t->find(own);
    ASSERT_GE(i, 0);
    EXPECT_TRUE(t->at(static_cast<std::uint32_t>(i)).executable);
    EXPECT_EQ(t->at(static_cast<std::uint32_t>(i)).build_id_len, 20u) << "Debian's libc has a GNU build id";
}

namespace {
// A static variable of this test program, in its .bss.
unsigned char g_probe[200000];
}  // namespace

TEST(SamplingAttributionStaticData, AnAddressInAVariableGivesTheVariablesStart) {
    auto maps = std::make_unique<MappingTable>();
    static char buffer[64 * 1024];
    ASSERT_TRUE(maps->refresh(nullptr, buffer, sizeof buffer));
    const auto address = reinterpret_cast<std::uint64_t>(&g_probe[150000]);
    g_probe[150000] = 1;
    const std::int32_t m = maps->find(address);
    ASSERT_GE(m, 0) << "the program's data (or .bss) is a module";
    const Mapping& map = maps->at(static_cast<std::uint32_t>(m));
    const std::string path(maps->path(map), map.path_len);
    const std::uint64_t at = map.file_offset + (address - map.start);

    std::vector<unsigned char> pool(StaticSymbols::bytes_for());
    auto symbols = std::make_unique<StaticSymbols>();
    symbols->init(pool.data());
    std::uint64_t start = 0;
    ASSERT_TRUE(symbols->variable_start(path.c_str(), map.inode, at, start)) << path << " has a symbol table";
    EXPECT_EQ(start, at - 150000) << "the offset of g_probe[0]";
    // The mapping that holds that start (the variable may begin in the
    // file's last page and go on in its .bss).
    const std::int32_t holder = maps->find_file_offset(map, start);
    ASSERT_GE(holder, 0);
    const Mapping& h = maps->at(static_cast<std::uint32_t>(holder));
    EXPECT_EQ(h.start + (start - h.file_offset), reinterpret_cast<std::uint64_t>(&g_probe[0]));
    // Past its end: another variable or none, not g_probe.
    std::uint64_t other = 0;
    EXPECT_TRUE(!symbols->variable_start(path.c_str(), map.inode, at - 150000 + sizeof g_probe, other) ||
                other != start);
    EXPECT_FALSE(symbols->variable_start("/nonexistent/file", 1, 0, other));
}

namespace {
__attribute__((noinline)) void allocating_function() { asm volatile(""); }
}  // namespace

TEST(SamplingAttribution, ASampleGetsItsSiteAndTheTrackedBlockItTouched) {
    attribution_reset_for_tests();
    AttributionOptions options;
    options.object_min_bytes = 1 << 20;
    ASSERT_TRUE(attribution_start(options));
    EXPECT_EQ(g_tracked_min_bytes.load(), 1u << 20);

    // An allocation "returning into" allocating_function: the interposer's
    // frame holds the caller's frame pointer (none here) and that return address.
    std::vector<unsigned char> block(2 << 20);
    const std::uint64_t ret = reinterpret_cast<std::uint64_t>(&allocating_function) + 4;
    const std::uint64_t frame[2] = {0, ret};
    track_allocation(block.data(), block.size(), ObjectKind::Heap, frame);
    EXPECT_EQ(attribution_allocations_tracked(), 1u);

    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kAttributedType, kUserRegisterMask));
    const std::uint64_t user = static_cast<std::uint64_t>(PERF_CONTEXT_USER);
    const std::uint64_t here = reinterpret_cast<std::uint64_t>(&allocating_function);
    Body b;
    b.u64(1).u64(here).u32x2(1, 1).u64(0).u64(reinterpret_cast<std::uint64_t>(block.data()) + 4096).u32x2(0, 0);
    b.u64(3).u64(user).u64(here).u64(ret);
    b.u64(PERF_SAMPLE_REGS_ABI_NONE).u64(0).weight_struct(0, 0, 0).u64(0);
    SampleRecord r;
    ASSERT_TRUE(layout.decode(b.data().data(), b.data().size(), r));
    SampleContext context;
    context.time_is_monotonic = false;  // the record's time is 0: any live block
    const SampleAttribution a = attribute_sample(r, context);
    ASSERT_GE(a.site, 0);
    ASSERT_GE(a.object, 0);
    const SiteEntry* site = attribution_sites().site(a.site);
    ASSERT_NE(site, nullptr);
    EXPECT_EQ(site->ip, here);
    EXPECT_EQ(attribution_sites().unwind_of(*site), Unwind::Callchain);
    const ObjectEntry* object = attribution_objects().object(a.object);
    ASSERT_NE(object, nullptr);
    EXPECT_EQ(object->kind, ObjectKind::Heap);
    const SiteEntry* allocated_at = attribution_sites().site(object->ref);
    ASSERT_NE(allocated_at, nullptr);
    EXPECT_EQ(allocated_at->ip, ret) << "the allocation's site: the return address into its caller";
    EXPECT_EQ(object->bytes.load(), block.size());

    // Freed: a later sample of the same address has no block any more.
    untrack_block(block.data());
    const SampleAttribution after = attribute_sample(r, context);
    EXPECT_NE(after.object, a.object);
    EXPECT_EQ(attribution_objects().object(after.object)->kind, ObjectKind::Unknown);
    attribution_reset_for_tests();
    EXPECT_EQ(g_tracked_min_bytes.load(), 0u);
}

// A page fault on the faulting instruction's own page in executable code is
// the code being paged in: no data object. The same instruction touching
// the program's data gets its static object.
TEST(SamplingAttribution, AFaultOnTheInstructionsOwnCodePageIsNoDataObject) {
    attribution_reset_for_tests();
    AttributionOptions options;
    options.object_min_bytes = 1 << 20;
    ASSERT_TRUE(attribution_start(options));
    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kAttributedType, kUserRegisterMask));
    const std::uint64_t user = static_cast<std::uint64_t>(PERF_CONTEXT_USER);
    const std::uint64_t here = reinterpret_cast<std::uint64_t>(&allocating_function);
    g_probe[4096] = 1;
    auto object_kind_of = [&](std::uint64_t address) {
        Body b;
        b.u64(1).u64(here).u32x2(1, 1).u64(0).u64(address).u32x2(0, 0);
        b.u64(2).u64(user).u64(here);
        b.u64(PERF_SAMPLE_REGS_ABI_NONE).u64(0).weight_struct(0, 0, 0).u64(0);
        SampleRecord r;
        EXPECT_TRUE(layout.decode(b.data().data(), b.data().size(), r));
        SampleContext context;
        context.time_is_monotonic = false;
        context.may_refresh_mappings = true;
        const SampleAttribution a = attribute_sample(r, context);
        const ObjectEntry* object = attribution_objects().object(a.object);
        return object == nullptr ? ObjectKind::Unknown : object->kind;
    };
    EXPECT_EQ(object_kind_of(here), ObjectKind::Unknown) << "the instruction's own fetch";
    EXPECT_EQ(object_kind_of(reinterpret_cast<std::uint64_t>(&g_probe[4096])), ObjectKind::Static);
    attribution_reset_for_tests();
}

TEST(SamplingAttribution, TheAccessTableKeepsSitesAndObjectsApart) {
    std::vector<std::uint64_t> memory(AccessTable::bytes_for(64) / sizeof(std::uint64_t));
    AccessTable t;
    t.init(memory.data(), 64);
    AccessKey k;
    k.cpu = 1;
    k.site = 3;
    k.object = 4;
    t.add(k, 10);
    AccessKey other = k;
    other.object = 5;
    t.add(other, 10);
    t.add(k, 20);
    EXPECT_EQ(t.size(), 2u);
    ASSERT_NE(t.find(k), nullptr);
    EXPECT_EQ(t.find(k)->count, 2u);
    int seen = 0;
    t.for_each([&](const AccessKey& key, const AccessEntry&) {
        EXPECT_EQ(key.site, 3);
        EXPECT_TRUE(key.object == 4 || key.object == 5);
        ++seen;
    });
    EXPECT_EQ(seen, 2);
    AccessKey unknown;
    EXPECT_EQ(AccessKey::unpack(unknown.pack(), unknown.pack_where()).site, -1);
}
