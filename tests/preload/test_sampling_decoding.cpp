// Decoding of perf records and data sources, on records built byte by byte
// from the kernel's documented layout (linux/perf_event.h) and the data
// source values the kernel's Intel PEBS and AMD IBS drivers produce.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "preload/sampling/access_table.hpp"
#include "preload/sampling/data_source.hpp"
#include "preload/sampling/perf_mem_level_numbers.hpp"
#include "preload/sampling/recorder_image.hpp"
#include "preload/sampling/ring_reader.hpp"
#include "preload/sampling/sample_record.hpp"
#include "preload/sampling/thread_slot.hpp"

using namespace stacksage::sampling;

namespace {

// The kernel's own shorthands (arch/x86/events/intel/ds.c, amd/ibs.c).
constexpr std::uint64_t P_OP(std::uint64_t v) { return v << PERF_MEM_OP_SHIFT; }
constexpr std::uint64_t P_LVL(std::uint64_t v) { return v << PERF_MEM_LVL_SHIFT; }
constexpr std::uint64_t P_SNOOP(std::uint64_t v) { return v << PERF_MEM_SNOOP_SHIFT; }
constexpr std::uint64_t LEVEL(std::uint64_t v) { return v << PERF_MEM_LVLNUM_SHIFT; }
constexpr std::uint64_t REM = std::uint64_t{PERF_MEM_REMOTE_REMOTE} << PERF_MEM_REMOTE_SHIFT;
constexpr std::uint64_t HOPS(std::uint64_t v) { return v << PERF_MEM_HOPS_SHIFT; }
constexpr std::uint64_t OP_LH = P_OP(PERF_MEM_OP_LOAD) | P_LVL(PERF_MEM_LVL_HIT);
// AMD's L(x): level with HIT.
constexpr std::uint64_t L(std::uint64_t lvl) { return P_LVL(lvl) | P_LVL(PERF_MEM_LVL_HIT); }

DataSource decode(std::uint64_t v) { return decode_data_source(v); }

}  // namespace

TEST(SamplingDataSource, IntelLegacyLevelBits) {
    // Sandy Bridge table of kernels before level numbers (Linux < 4.14).
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_L1) | P_SNOOP(PERF_MEM_SNOOP_NONE)).served_by, ServedBy::L1);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_LFB)).served_by, ServedBy::FillBuffer);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_L2)).served_by, ServedBy::L2);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_L3) | P_SNOOP(PERF_MEM_SNOOP_HITM)).served_by, ServedBy::L3);
    const DataSource rcache = decode(OP_LH | P_LVL(PERF_MEM_LVL_REM_CCE1) | P_SNOOP(PERF_MEM_SNOOP_HIT));
    EXPECT_EQ(rcache.served_by, ServedBy::RemoteCache);
    EXPECT_TRUE(rcache.remote);
    EXPECT_FALSE(rcache.from_level_number);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_LOC_RAM) | P_SNOOP(PERF_MEM_SNOOP_HIT)).served_by, ServedBy::LocalDram);
    const DataSource rdram = decode(OP_LH | P_LVL(PERF_MEM_LVL_REM_RAM1) | P_SNOOP(PERF_MEM_SNOOP_MISS));
    EXPECT_EQ(rdram.served_by, ServedBy::RemoteDram);
    EXPECT_TRUE(rdram.remote);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_IO)).served_by, ServedBy::Io);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_UNC)).served_by, ServedBy::Uncached);
    // 0x00 "unknown L3": a miss, source unknown.
    const DataSource unknown = decode(P_OP(PERF_MEM_OP_LOAD) | P_LVL(PERF_MEM_LVL_MISS) | P_LVL(PERF_MEM_LVL_L3));
    EXPECT_EQ(unknown.served_by, ServedBy::Unknown);
    EXPECT_TRUE(unknown.missed);
    EXPECT_EQ(unknown.op, MemOp::Load);
    EXPECT_EQ(decode(0).served_by, ServedBy::Unknown);
    EXPECT_EQ(decode(0).op, MemOp::Unknown);
}

TEST(SamplingDataSource, IntelLevelNumberEncodings) {
    // The same table since Linux 4.14: LEVEL() and REM beside the legacy bits.
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_L1) | LEVEL(PERF_MEM_LVLNUM_L1)).served_by, ServedBy::L1);
    EXPECT_TRUE(decode(OP_LH | P_LVL(PERF_MEM_LVL_L1) | LEVEL(PERF_MEM_LVLNUM_L1)).from_level_number);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_LFB) | LEVEL(PERF_MEM_LVLNUM_LFB)).served_by, ServedBy::FillBuffer);
    // 0x08: L3 miss, snoop hit in another socket's cache.
    const DataSource c = decode(OP_LH | P_LVL(PERF_MEM_LVL_REM_CCE1) | REM | LEVEL(PERF_MEM_LVLNUM_L3) |
                                P_SNOOP(PERF_MEM_SNOOP_HIT));
    EXPECT_EQ(c.served_by, ServedBy::RemoteCache);
    EXPECT_TRUE(c.remote);
    // 0x0b: remote DRAM, which that table marks LEVEL(L3) + REM.
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_REM_RAM1) | REM | LEVEL(PERF_MEM_LVLNUM_L3)).served_by,
              ServedBy::RemoteDram);
    // 0x0c / 0x0d: local and remote DRAM.
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_LOC_RAM) | LEVEL(PERF_MEM_LVLNUM_RAM)).served_by, ServedBy::LocalDram);
    EXPECT_EQ(decode(OP_LH | P_LVL(PERF_MEM_LVL_REM_RAM1) | LEVEL(PERF_MEM_LVLNUM_RAM) | REM).served_by,
              ServedBy::RemoteDram);
    // 0x0e: I/O with LEVEL(NA): the legacy bits decide.
    const DataSource io = decode(OP_LH | P_LVL(PERF_MEM_LVL_IO) | LEVEL(PERF_MEM_LVLNUM_NA));
    EXPECT_EQ(io.served_by, ServedBy::Io);
    EXPECT_FALSE(io.from_level_number);
    // Lion Cove: L2 miss-handling buffer and memory-side cache.
    EXPECT_EQ(decode(OP_LH | LEVEL(PERF_MEM_LVLNUM_L2_MHB)).served_by, ServedBy::FillBuffer);
    EXPECT_EQ(decode(OP_LH | LEVEL(PERF_MEM_LVLNUM_MSC)).served_by, ServedBy::MemorySideCache);
    // 0x0f on Lion Cove: "L3 miss, snoop HitM" is a miss.
    const DataSource miss = decode(P_OP(PERF_MEM_OP_LOAD) | P_LVL(PERF_MEM_LVL_MISS) | P_LVL(PERF_MEM_LVL_L3) |
                                   LEVEL(PERF_MEM_LVLNUM_L3) | P_SNOOP(PERF_MEM_SNOOP_HITM));
    EXPECT_EQ(miss.served_by, ServedBy::Unknown);
    EXPECT_TRUE(miss.missed);
    // PMEM and CXL.
    EXPECT_EQ(decode(OP_LH | LEVEL(PERF_MEM_LVLNUM_PMEM)).served_by, ServedBy::Pmem);
    EXPECT_EQ(decode(OP_LH | LEVEL(PERF_MEM_LVLNUM_CXL)).served_by, ServedBy::Cxl);
}

TEST(SamplingDataSource, StoresAndHops) {
    // precise_store_data(): L1 hit, or L1 miss (served further away).
    const DataSource hit = decode(P_OP(PERF_MEM_OP_STORE) | P_LVL(PERF_MEM_LVL_L1) | P_LVL(PERF_MEM_LVL_HIT));
    EXPECT_EQ(hit.op, MemOp::Store);
    EXPECT_EQ(hit.served_by, ServedBy::L1);
    const DataSource miss = decode(P_OP(PERF_MEM_OP_STORE) | P_LVL(PERF_MEM_LVL_L1) | P_LVL(PERF_MEM_LVL_MISS));
    EXPECT_EQ(miss.served_by, ServedBy::Unknown);
    EXPECT_TRUE(miss.missed);
    // Remote DRAM two sockets away on a multi-board machine.
    const DataSource far = decode(OP_LH | LEVEL(PERF_MEM_LVLNUM_RAM) | REM | HOPS(PERF_MEM_HOPS_3));
    EXPECT_EQ(far.served_by, ServedBy::RemoteDram);
    EXPECT_EQ(far.hops, PERF_MEM_HOPS_3);
    EXPECT_EQ(decode(P_OP(PERF_MEM_OP_PFETCH)).op, MemOp::Prefetch);
    EXPECT_EQ(decode(P_OP(PERF_MEM_OP_EXEC)).op, MemOp::Exec);
}

TEST(SamplingDataSource, AmdIbsBeforeZen4) {
    // g_data_src[] of arch/x86/events/amd/ibs.c.
    const DataSource local_cache =
        decode(P_OP(PERF_MEM_OP_LOAD) | L(PERF_MEM_LVL_L3) | L(PERF_MEM_LVL_REM_CCE1) |
               LEVEL(PERF_MEM_LVLNUM_ANY_CACHE) | HOPS(PERF_MEM_HOPS_0));
    EXPECT_EQ(local_cache.served_by, ServedBy::PeerCache);
    EXPECT_FALSE(local_cache.remote);
    EXPECT_EQ(decode(P_OP(PERF_MEM_OP_LOAD) | L(PERF_MEM_LVL_LOC_RAM) | LEVEL(PERF_MEM_LVLNUM_RAM)).served_by,
              ServedBy::LocalDram);
    // DRAM with OpData2[RmtNode].
    const DataSource remote_dram = decode(P_OP(PERF_MEM_OP_LOAD) | L(PERF_MEM_LVL_REM_RAM1) |
                                          LEVEL(PERF_MEM_LVLNUM_RAM) | REM | HOPS(PERF_MEM_HOPS_1));
    EXPECT_EQ(remote_dram.served_by, ServedBy::RemoteDram);
    EXPECT_EQ(remote_dram.hops, PERF_MEM_HOPS_1);
    const DataSource remote_cache = decode(P_OP(PERF_MEM_OP_LOAD) | L(PERF_MEM_LVL_REM_CCE2) |
                                           LEVEL(PERF_MEM_LVLNUM_ANY_CACHE) | REM | HOPS(PERF_MEM_HOPS_1));
    EXPECT_EQ(remote_cache.served_by, ServedBy::RemoteCache);
    EXPECT_EQ(decode(P_OP(PERF_MEM_OP_LOAD) | L(PERF_MEM_LVL_IO) | LEVEL(PERF_MEM_LVLNUM_IO)).served_by, ServedBy::Io);
}

TEST(SamplingDataSource, AmdIbsZen4) {
    // g_zen4_data_src[] and the L1/L2/uncached/MAB paths of perf_ibs_get_mem_lvl().
    const std::uint64_t load = P_OP(PERF_MEM_OP_LOAD);
    EXPECT_EQ(decode(load | L(PERF_MEM_LVL_L1) | LEVEL(PERF_MEM_LVLNUM_L1)).served_by, ServedBy::L1);
    EXPECT_EQ(decode(load | L(PERF_MEM_LVL_L2) | LEVEL(PERF_MEM_LVLNUM_L2)).served_by, ServedBy::L2);
    EXPECT_EQ(decode(load | L(PERF_MEM_LVL_L3) | LEVEL(PERF_MEM_LVLNUM_L3)).served_by, ServedBy::L3);
    const DataSource near_ccx =
        decode(load | L(PERF_MEM_LVL_REM_CCE1) | LEVEL(PERF_MEM_LVLNUM_ANY_CACHE) | REM | HOPS(PERF_MEM_HOPS_0));
    EXPECT_EQ(near_ccx.served_by, ServedBy::PeerCache) << "another CCX of the same node";
    const DataSource far_ccx =
        decode(load | L(PERF_MEM_LVL_REM_CCE2) | LEVEL(PERF_MEM_LVLNUM_ANY_CACHE) | REM | HOPS(PERF_MEM_HOPS_1));
    EXPECT_EQ(far_ccx.served_by, ServedBy::RemoteCache);
    EXPECT_EQ(decode(load | LEVEL(PERF_MEM_LVLNUM_PMEM)).served_by, ServedBy::Pmem);
    const DataSource cxl = decode(load | LEVEL(PERF_MEM_LVLNUM_CXL) | REM | HOPS(PERF_MEM_HOPS_1));
    EXPECT_EQ(cxl.served_by, ServedBy::Cxl);
    EXPECT_TRUE(cxl.remote);
    EXPECT_EQ(decode(load | L(PERF_MEM_LVL_UNC) | LEVEL(PERF_MEM_LVLNUM_UNC)).served_by, ServedBy::Uncached);
    EXPECT_EQ(decode(load | L(PERF_MEM_LVL_LFB) | LEVEL(PERF_MEM_LVLNUM_LFB)).served_by, ServedBy::FillBuffer);
    // "Don't set HIT with NA".
    const DataSource na = decode(load | P_LVL(PERF_MEM_LVL_NA) | LEVEL(PERF_MEM_LVLNUM_NA));
    EXPECT_EQ(na.served_by, ServedBy::Unknown);
    EXPECT_FALSE(na.missed);
}

TEST(SamplingDataSource, NamesRoundTrip) {
    for (int i = 0; i < kServedByCount; ++i) {
        ServedBy s;
        ASSERT_TRUE(served_by_from_name(served_by_name(static_cast<ServedBy>(i)), s));
        EXPECT_EQ(static_cast<int>(s), i);
    }
    for (int i = 0; i < kMemOpCount; ++i) {
        MemOp op;
        ASSERT_TRUE(mem_op_from_name(mem_op_name(static_cast<MemOp>(i)), op));
        EXPECT_EQ(static_cast<int>(op), i);
    }
    ServedBy s;
    EXPECT_FALSE(served_by_from_name("L9", s));
}

// ---- records -----------------------------------------------------------------

namespace {

// Builds one record as the kernel writes it: header, then the fields.
class RecordBuilder {
public:
    RecordBuilder& u64(std::uint64_t v) { return put(&v, 8); }
    RecordBuilder& u32x2(std::uint32_t a, std::uint32_t b) { return u64(a | std::uint64_t{b} << 32); }
    RecordBuilder& weight_struct(std::uint32_t var1, std::uint16_t var2, std::uint16_t var3) {
        put(&var1, 4);
        put(&var2, 2);
        return put(&var3, 2);
    }
    std::vector<unsigned char> finish(std::uint32_t type, std::uint16_t misc = PERF_RECORD_MISC_USER) const {
        perf_event_header h{type, misc, static_cast<std::uint16_t>(sizeof h + body_.size())};
        std::vector<unsigned char> out(sizeof h);
        std::memcpy(out.data(), &h, sizeof h);
        out.insert(out.end(), body_.begin(), body_.end());
        return out;
    }

private:
    RecordBuilder& put(const void* p, std::size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        body_.insert(body_.end(), b, b + n);
        return *this;
    }
    std::vector<unsigned char> body_;
};

constexpr std::uint64_t kMemType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                   PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT_STRUCT |
                                   PERF_SAMPLE_DATA_SRC;

std::vector<unsigned char> mem_sample(std::uint64_t id, std::uint64_t ip, std::uint32_t pid, std::uint32_t tid,
                                      std::uint64_t time, std::uint64_t addr, std::uint32_t cpu,
                                      std::uint32_t latency, std::uint64_t data_src) {
    return RecordBuilder()
        .u64(id)
        .u64(ip)
        .u32x2(pid, tid)
        .u64(time)
        .u64(addr)
        .u32x2(cpu, 0)
        .weight_struct(latency, 7, 0)
        .u64(data_src)
        .finish(PERF_RECORD_SAMPLE);
}

// A ring buffer laid out as the kernel maps it: the metadata page, then a
// power-of-two data area; we play the kernel's part (writing at data_head).
class FakeRing {
public:
    explicit FakeRing(std::size_t data_bytes) : data_bytes_(data_bytes) {
        memory_ = static_cast<unsigned char*>(std::aligned_alloc(4096, 4096 + data_bytes));
        std::memset(memory_, 0, 4096 + data_bytes);
        meta()->data_offset = 4096;
        meta()->data_size = data_bytes;
    }
    ~FakeRing() { std::free(memory_); }
    perf_event_mmap_page* meta() { return reinterpret_cast<perf_event_mmap_page*>(memory_); }
    RingView view() { return ring_view_of(memory_, 4096 + data_bytes_, 4096); }
    // Appends a record at data_head (wrapping), as the kernel does; false when full.
    bool write(const std::vector<unsigned char>& record) {
        const std::uint64_t head = meta()->data_head;
        if (head + record.size() - meta()->data_tail > data_bytes_) return false;
        for (std::size_t i = 0; i < record.size(); ++i)
            memory_[4096 + ((head + i) & (data_bytes_ - 1))] = record[i];
        meta()->data_head = head + record.size();
        return true;
    }
    void skip_head_to(std::uint64_t position) { meta()->data_head = meta()->data_tail = position; }

private:
    unsigned char* memory_;
    std::size_t data_bytes_;
};

struct CollectingSink {
    SampleLayout layout;
    std::vector<SampleRecord> samples;
    std::uint64_t lost = 0;
    std::size_t truncated = 0;
    void on_sample(const unsigned char* body, std::size_t len) {
        SampleRecord r;
        if (!layout.decode(body, len, r)) {
            ++truncated;
            return;
        }
        samples.push_back(r);
    }
    void on_lost(std::uint64_t, std::uint64_t n) { lost += n; }
};

}  // namespace

TEST(SamplingRecord, LayoutFollowsTheKernelsFieldOrder) {
    SampleLayout layout;
    ASSERT_TRUE(layout.configure(kMemType));
    EXPECT_EQ(layout.body_size(), 64u);
    const auto rec = mem_sample(77, 0x401000, 4711, 4712, 123456789, 0x7f0000001000, 3, 250,
                                OP_LH | LEVEL(PERF_MEM_LVLNUM_RAM));
    SampleRecord r;
    ASSERT_TRUE(layout.decode(rec.data() + 8, rec.size() - 8, r));
    EXPECT_EQ(r.id, 77u);
    EXPECT_EQ(r.ip, 0x401000u);
    EXPECT_EQ(r.pid, 4711u);
    EXPECT_EQ(r.tid, 4712u);
    EXPECT_EQ(r.time, 123456789u);
    EXPECT_EQ(r.addr, 0x7f0000001000u);
    EXPECT_EQ(r.cpu, 3u);
    EXPECT_EQ(r.weight, 250u);
    EXPECT_EQ(r.weight_var2, 7u);
    EXPECT_EQ(r.data_src, OP_LH | LEVEL(PERF_MEM_LVLNUM_RAM));
    EXPECT_FALSE(layout.decode(rec.data() + 8, rec.size() - 16, r)) << "truncated body";

    // The plain 64-bit weight, and PERF_SAMPLE_ID/PERIOD in their places.
    ASSERT_TRUE(layout.configure(PERF_SAMPLE_IP | PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                 PERF_SAMPLE_WEIGHT | PERF_SAMPLE_PHYS_ADDR));
    const auto rec2 = RecordBuilder().u64(1).u64(99).u32x2(5, 0).u64(1000).u64(0x1'0000'0001).u64(0xabc000)
                          .finish(PERF_RECORD_SAMPLE);
    ASSERT_TRUE(layout.decode(rec2.data() + 8, rec2.size() - 8, r));
    EXPECT_EQ(r.id, 99u);
    EXPECT_EQ(r.cpu, 5u);
    EXPECT_EQ(r.period, 1000u);
    EXPECT_EQ(r.weight, 0x1'0000'0001u) << "WEIGHT is the whole u64";
    EXPECT_EQ(r.phys_addr, 0xabc000u);

    EXPECT_FALSE(layout.configure(PERF_SAMPLE_IP | PERF_SAMPLE_READ)) << "READ, RAW, BRANCH_STACK are refused";
    EXPECT_FALSE(layout.configure(PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK));
    EXPECT_FALSE(layout.configure(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT));
}

TEST(SamplingRing, DrainsRecordsThatWrapAroundTheEnd) {
    FakeRing ring(4096);
    CollectingSink sink;
    ASSERT_TRUE(sink.layout.configure(kMemType));
    RingStats stats;
    // 72-byte records do not divide 4096: after a few rounds every record
    // position has been used, including splits inside the body.
    std::uint64_t next = 0;
    for (int round = 0; round < 40; ++round) {
        for (int i = 0; i < 50; ++i) {
            const auto rec = mem_sample(1, 0x400000 + next, 10, 11, next, 0x1000 * next, static_cast<std::uint32_t>(next % 4),
                                        static_cast<std::uint32_t>(next), OP_LH | LEVEL(PERF_MEM_LVLNUM_L2));
            if (!ring.write(rec)) break;
            ++next;
        }
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(ring.meta()->data_tail, ring.meta()->data_head);
    }
    ASSERT_EQ(sink.samples.size(), next);
    EXPECT_EQ(stats.samples, next);
    EXPECT_EQ(stats.corrupt, 0u);
    for (std::uint64_t i = 0; i < next; ++i) {
        ASSERT_EQ(sink.samples[i].time, i);
        ASSERT_EQ(sink.samples[i].addr, 0x1000 * i);
        ASSERT_EQ(sink.samples[i].weight, i);
    }
    EXPECT_GT(ring.meta()->data_head, 40 * 1024u) << "the ring wrapped many times";
}

TEST(SamplingRing, CountsLostThrottledAndOtherRecords) {
    FakeRing ring(4096);
    CollectingSink sink;
    ASSERT_TRUE(sink.layout.configure(kMemType));
    ring.write(RecordBuilder().u64(5).u64(17).finish(PERF_RECORD_LOST));
    ring.write(RecordBuilder().u64(1000).u64(5).u64(5).finish(PERF_RECORD_THROTTLE));
    ring.write(RecordBuilder().u64(2000).u64(5).u64(5).finish(PERF_RECORD_UNTHROTTLE));
    ring.write(RecordBuilder().u64(3).finish(PERF_RECORD_LOST_SAMPLES));
    ring.write(RecordBuilder().u32x2(1, 2).u64(0x400000).u64(4096).u64(0).u64(0).finish(PERF_RECORD_MMAP));
    ring.write(mem_sample(1, 1, 1, 1, 1, 1, 1, 1, 0));
    RingStats stats;
    drain_ring(ring.view(), sink, stats);
    EXPECT_EQ(stats.records, 6u);
    EXPECT_EQ(stats.lost, 20u);
    EXPECT_EQ(sink.lost, 20u);
    EXPECT_EQ(stats.throttled, 1u);
    EXPECT_EQ(stats.unthrottled, 1u);
    EXPECT_EQ(stats.other, 1u);
    EXPECT_EQ(stats.samples, 1u);
}

TEST(SamplingRing, TruncatedAndCorruptRecords) {
    CollectingSink sink;
    ASSERT_TRUE(sink.layout.configure(kMemType));
    {
        // A sample whose body is shorter than its layout: skipped, the next one read.
        FakeRing ring(4096);
        ring.write(RecordBuilder().u64(1).u64(2).finish(PERF_RECORD_SAMPLE));
        ring.write(mem_sample(1, 1, 1, 1, 42, 1, 1, 1, 0));
        RingStats stats;
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(sink.truncated, 1u);
        ASSERT_EQ(sink.samples.size(), 1u);
        EXPECT_EQ(sink.samples[0].time, 42u);
    }
    {
        // A header of size 0 would loop forever; one claiming more than the
        // kernel published is garbage. Both drop the rest, counted.
        FakeRing ring(4096);
        ring.write(mem_sample(1, 1, 1, 1, 1, 1, 1, 1, 0));
        ring.write(std::vector<unsigned char>(8, 0));
        ring.write(mem_sample(1, 1, 1, 1, 2, 1, 1, 1, 0));
        RingStats stats;
        sink.samples.clear();
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(stats.corrupt, 1u);
        EXPECT_EQ(sink.samples.size(), 1u);
        EXPECT_EQ(ring.meta()->data_tail, ring.meta()->data_head) << "the kernel gets its space back";

        auto bad = mem_sample(1, 1, 1, 1, 3, 1, 1, 1, 0);
        perf_event_header h;
        std::memcpy(&h, bad.data(), sizeof h);
        h.size = 4000;  // beyond data_head
        std::memcpy(bad.data(), &h, sizeof h);
        ring.write(bad);
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(stats.corrupt, 2u);
        EXPECT_EQ(sink.samples.size(), 1u);

        h.size = 70;  // not a multiple of 8
        std::memcpy(bad.data(), &h, sizeof h);
        ring.write(bad);
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(stats.corrupt, 3u);
    }
    {
        // A record too large for the scratch buffer that wraps is skipped, not misread.
        FakeRing ring(4096);
        ring.skip_head_to(4096 - 64);
        RecordBuilder big;
        for (int i = 0; i < 127; ++i) big.u64(static_cast<std::uint64_t>(i));
        ring.write(big.finish(PERF_RECORD_SAMPLE));
        ring.write(mem_sample(1, 1, 1, 1, 9, 1, 1, 1, 0));
        RingStats stats;
        sink.samples.clear();
        drain_ring(ring.view(), sink, stats);
        EXPECT_EQ(stats.oversize, 1u);
        ASSERT_EQ(sink.samples.size(), 1u);
        EXPECT_EQ(sink.samples[0].time, 9u);
    }
}

TEST(SamplingRing, OldKernelsWithoutDataOffset) {
    alignas(4096) static unsigned char mapping[4096 * 3] = {};
    RingView v = ring_view_of(mapping, sizeof mapping, 4096);
    EXPECT_EQ(v.data, mapping + 4096);
    EXPECT_EQ(v.size, 8192u);
}

// ---- aggregation --------------------------------------------------------------

TEST(SamplingTable, AggregatesCountsWeightsAndHistograms) {
    std::vector<std::uint64_t> memory(AccessTable::bytes_for(64) / sizeof(std::uint64_t));
    AccessTable t;
    t.init(memory.data(), 64);
    AccessKey dram;
    dram.backend = Backend::Pebs;
    dram.served_by = ServedBy::RemoteDram;
    dram.op = MemOp::Load;
    dram.remote = true;
    dram.hops = 2;
    dram.cpu = 7;
    dram.node = 1;
    EXPECT_EQ(AccessKey::unpack(dram.pack()), dram);
    AccessKey l1 = dram;
    l1.served_by = ServedBy::L1;
    l1.remote = false;
    l1.node = -1;
    EXPECT_EQ(AccessKey::unpack(l1.pack()).node, -1);
    EXPECT_NE(l1.pack(), AccessEntry::kEmpty);

    t.add(dram, 300);
    t.add(dram, 500);
    t.add(dram, 0);
    t.add(l1, 4);
    EXPECT_EQ(t.size(), 2u);
    EXPECT_EQ(t.total(), 4u);
    const AccessEntry* e = t.find(dram);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->count, 3u);
    EXPECT_EQ(e->weight_sum, 800u);
    EXPECT_EQ(e->weight_max, 500u);
    EXPECT_EQ(e->histogram[0], 1u);                 // weight 0
    EXPECT_EQ(latency_bucket(300), 9);              // [256, 512)
    EXPECT_EQ(e->histogram[9], 2u);                 // 300 and 500
    EXPECT_EQ(latency_bucket(1), 1);
    EXPECT_EQ(latency_bucket(3), 2);
    EXPECT_EQ(latency_bucket(1u << 20), kLatencyBuckets - 1);
    EXPECT_EQ(latency_bucket_floor(9), 256u);

    // Fills to 3/4, then drops and counts.
    for (std::uint32_t cpu = 100; cpu < 200; ++cpu) {
        AccessKey k = l1;
        k.cpu = cpu;
        t.add(k, 1);
    }
    EXPECT_EQ(t.size(), 48u);
    EXPECT_EQ(t.dropped(), 100u - 46u);

    std::vector<std::uint64_t> memory2(AccessTable::bytes_for(128) / sizeof(std::uint64_t));
    AccessTable total;
    total.init(memory2.data(), 128);
    total.merge(t);
    total.merge(t);
    EXPECT_EQ(total.find(dram)->count, 6u);
    EXPECT_EQ(total.find(dram)->histogram[9], 4u);
    EXPECT_EQ(total.total(), 2 * t.total());
}

// The recorder's own accesses (its code writing an event, its buffers) are
// not the application's: a memory sample whose instruction or data address
// lies in the recorder's image is counted apart and dropped; where the
// thread ran (cpu-clock) is kept whatever code ran.
TEST(SamplingSlot, SamplesOfTheRecordersOwnImageAreDropped) {
    void* memory = std::calloc(1, thread_slot_bytes());
    ThreadSlot* slot = construct_thread_slot(memory);
    FakeRing ring(8192);
    slot->events.mapping = memory;
    slot->events.ring = ring.view();
    slot->events.count = 2;
    slot->events.id[0] = 100;
    slot->events.kind[0] = EventKind::PageFault;
    ASSERT_TRUE(slot->events.layout[0].configure(kMemType));
    slot->events.id[1] = 200;
    slot->events.kind[1] = EventKind::CpuClock;
    ASSERT_TRUE(slot->events.layout[1].configure(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU));
    const AddressRange saved = recorder_image();
    set_recorder_image({0x7f0000000000, 0x7f0000100000});  // "the recorder's image"
    const std::uint64_t inside = 0x7f0000001000, outside = 0x7e0000001000;
    ring.write(mem_sample(100, inside, 1, 1, 1, outside, 0, 0, 0));   // the recorder's code touched memory
    ring.write(mem_sample(100, outside, 1, 1, 2, inside, 0, 0, 0));   // the application touched... the recorder's buffer
    ring.write(mem_sample(100, outside, 1, 1, 3, outside, 0, 0, 0));  // the application's own access
    ring.write(RecordBuilder().u64(200).u64(inside).u32x2(1, 1).u64(4).u32x2(0, 0).finish(PERF_RECORD_SAMPLE));
    slot->drain(nullptr);
    set_recorder_image(saved);
    EXPECT_EQ(slot->recorder_samples, 2u);
    EXPECT_EQ(slot->samples, 2u) << "the application's page fault and the cpu-clock sample";
    std::free(memory);
}

// The image of a loaded module spans its code and its data.
TEST(SamplingSlot, TheLoadedImageOfAModuleHoldsItsCodeAndData) {
    static int data_of_this_module = 1;
    const AddressRange image = loaded_image_of(reinterpret_cast<const void*>(&construct_thread_slot));
    ASSERT_LT(image.start, image.end);
    EXPECT_TRUE(image.contains(reinterpret_cast<std::uint64_t>(&construct_thread_slot)));
    EXPECT_TRUE(image.contains(reinterpret_cast<std::uint64_t>(&data_of_this_module)));
    int on_the_stack = 0;
    EXPECT_FALSE(image.contains(reinterpret_cast<std::uint64_t>(&on_the_stack)));
    EXPECT_FALSE(loaded_image_of(&on_the_stack).contains(reinterpret_cast<std::uint64_t>(&on_the_stack)));
    // This test program links the sampler in: it is all application.
    const AddressRange library = library_image_of(reinterpret_cast<const void*>(&construct_thread_slot));
    EXPECT_EQ(library.start, library.end);
    // A shared library has an image of its own.
    const AddressRange libc = library_image_of(reinterpret_cast<const void*>(&std::free));
    EXPECT_LT(libc.start, libc.end);
    EXPECT_TRUE(libc.contains(reinterpret_cast<std::uint64_t>(&std::free)));
}

TEST(SamplingSlot, DrainsDecodesResolvesNodesAndAggregates) {
    // A slot whose ring we fill ourselves: the path live samples take,
    // minus the kernel.
    void* memory = std::calloc(1, thread_slot_bytes());
    ThreadSlot* slot = construct_thread_slot(memory);
    FakeRing ring(8192);
    slot->events.mapping = memory;  // anything non-null: the ring is ours
    slot->events.ring = ring.view();
    slot->events.count = 2;
    slot->events.id[0] = 100;
    slot->events.kind[0] = EventKind::PebsLoads;
    ASSERT_TRUE(slot->events.layout[0].configure(kMemType));
    slot->events.id[1] = 200;
    slot->events.kind[1] = EventKind::CpuClock;
    ASSERT_TRUE(slot->events.layout[1].configure(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                                 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU));
    // Real memory of this process (its node is known to the kernel) and an
    // address nothing is mapped at.
    static char touched[8192];
    touched[0] = 1;
    const auto here = reinterpret_cast<std::uint64_t>(&touched[0]);
    const std::uint64_t nowhere = 0x10;
    const std::uint64_t local_dram = OP_LH | P_LVL(PERF_MEM_LVL_LOC_RAM) | LEVEL(PERF_MEM_LVLNUM_RAM);
    const std::uint64_t l2 = OP_LH | P_LVL(PERF_MEM_LVL_L2) | LEVEL(PERF_MEM_LVLNUM_L2);
    int written = 0;
    for (int i = 0; i < 300; ++i) {
        ring.write(mem_sample(100, 1, 1, 1, static_cast<std::uint64_t>(i), i % 3 == 2 ? nowhere : here, 1,
                              i % 2 ? 200 : 40, i % 3 == 0 ? l2 : local_dram));
        ring.write(RecordBuilder().u64(200).u64(1).u32x2(1, 1).u64(static_cast<std::uint64_t>(i))
                       .u32x2(i < 100 ? 0 : 1, 0).finish(PERF_RECORD_SAMPLE));
        written += 2;
        if (i % 40 == 39) slot->drain(nullptr);
    }
    ring.write(RecordBuilder().u64(999).u64(0).finish(PERF_RECORD_SAMPLE));  // an id we never opened
    slot->drain(nullptr);
    EXPECT_EQ(slot->samples, static_cast<std::uint64_t>(written));
    EXPECT_EQ(slot->decode_errors, 1u);
    EXPECT_EQ(slot->migrations, 1u) << "cpu-clock went from CPU 0 to CPU 1 once";

    std::uint64_t l2_count = 0, dram_here = 0, dram_nowhere = 0, ran0 = 0, ran1 = 0;
    slot->table.for_each([&](const AccessKey& k, const AccessEntry& e) {
        if (k.backend == Backend::CpuClock) {
            (k.cpu == 0 ? ran0 : ran1) += e.count;
            EXPECT_EQ(k.node, -1);
            return;
        }
        EXPECT_EQ(k.backend, Backend::Pebs);
        EXPECT_EQ(k.op, MemOp::Load);
        if (k.served_by == ServedBy::L2) {
            l2_count += e.count;
            EXPECT_EQ(k.node, -1) << "cache hits need no node lookup";
        } else {
            ASSERT_EQ(k.served_by, ServedBy::LocalDram);
            (k.node >= 0 ? dram_here : dram_nowhere) += e.count;
            EXPECT_EQ(e.histogram[latency_bucket(40)] + e.histogram[latency_bucket(200)], e.count);
        }
    });
    EXPECT_EQ(l2_count, 100u);
    EXPECT_EQ(dram_here, 100u) << "mapped memory resolves to a node";
    EXPECT_EQ(dram_nowhere, 100u) << "an unmapped address has no node";
    EXPECT_EQ(ran0, 100u);
    EXPECT_EQ(ran1, 200u);
    EXPECT_GE(slot->numa.syscalls(), 1u);
    EXPECT_LE(slot->numa.syscalls(), 20u) << "nodes are asked for in batches";
    std::free(memory);
}
