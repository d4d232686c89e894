#include "preload/sampling/data_source.hpp"

#include <cstring>

#include "preload/sampling/perf_mem_level_numbers.hpp"

namespace stacksage::sampling {

namespace {

constexpr const char* kServedNames[kServedByCount] = {
    "unknown", "L1",         "fill_buffer", "L2",  "L3",  "L4",
    "peer_cache", "remote_cache", "local_dram", "remote_dram", "pmem", "cxl",
    "memory_side_cache", "io", "uncached",
};
constexpr const char* kOpNames[kMemOpCount] = {"unknown", "load", "store", "prefetch", "exec"};

std::uint64_t field(std::uint64_t v, unsigned shift, unsigned bits) {
    return (v >> shift) & ((std::uint64_t{1} << bits) - 1);
}

MemOp decode_op(std::uint64_t op) {
    // A sample is one operation; when several bits are set, loads win
    // (prefetches and execs are rare and not what the heatmap is about).
    if (op & PERF_MEM_OP_LOAD) return MemOp::Load;
    if (op & PERF_MEM_OP_STORE) return MemOp::Store;
    if (op & PERF_MEM_OP_PFETCH) return MemOp::Prefetch;
    if (op & PERF_MEM_OP_EXEC) return MemOp::Exec;
    return MemOp::Unknown;
}

ServedBy from_legacy(std::uint64_t lvl, bool& remote) {
    if (lvl & PERF_MEM_LVL_UNC) return ServedBy::Uncached;
    if (lvl & PERF_MEM_LVL_IO) return ServedBy::Io;
    if (lvl & PERF_MEM_LVL_L1) return ServedBy::L1;
    if (lvl & PERF_MEM_LVL_LFB) return ServedBy::FillBuffer;
    if (lvl & PERF_MEM_LVL_L2) return ServedBy::L2;
    // AMD's older "local cache" sets L3 and REM_CCE1 together: L3 first.
    if (lvl & PERF_MEM_LVL_L3) return ServedBy::L3;
    if (lvl & PERF_MEM_LVL_LOC_RAM) return ServedBy::LocalDram;
    if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) {
        remote = true;
        return ServedBy::RemoteDram;
    }
    if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2)) {
        remote = true;
        return ServedBy::RemoteCache;
    }
    return ServedBy::Unknown;
}

}  // namespace

const char* served_by_name(ServedBy s) {
    const auto i = static_cast<unsigned>(s);
    return i < kServedByCount ? kServedNames[i] : "unknown";
}

bool served_by_from_name(const char* name, ServedBy& out) {
    for (int i = 0; i < kServedByCount; ++i)
        if (std::strcmp(name, kServedNames[i]) == 0) {
            out = static_cast<ServedBy>(i);
            return true;
        }
    return false;
}

const char* mem_op_name(MemOp op) {
    const auto i = static_cast<unsigned>(op);
    return i < kMemOpCount ? kOpNames[i] : "unknown";
}

bool mem_op_from_name(const char* name, MemOp& out) {
    for (int i = 0; i < kMemOpCount; ++i)
        if (std::strcmp(name, kOpNames[i]) == 0) {
            out = static_cast<MemOp>(i);
            return true;
        }
    return false;
}

DataSource decode_data_source(std::uint64_t v) {
    DataSource d;
    d.op = decode_op(field(v, PERF_MEM_OP_SHIFT, 5));
    const std::uint64_t lvl = field(v, PERF_MEM_LVL_SHIFT, 14);
    const std::uint64_t num = field(v, PERF_MEM_LVLNUM_SHIFT, 4);
    d.remote = field(v, PERF_MEM_REMOTE_SHIFT, 1) != 0;
    d.hops = static_cast<std::uint8_t>(field(v, PERF_MEM_HOPS_SHIFT, 3));
    // The kernel sets MISS without HIT for "missed this level, served from
    // further away, we do not know where" (Intel's unknown-L3 source, stores
    // that missed L1).
    d.missed = (lvl & PERF_MEM_LVL_MISS) && !(lvl & PERF_MEM_LVL_HIT);

    if (num != 0 && num != PERF_MEM_LVLNUM_NA) {
        d.from_level_number = true;
        if (d.missed) return d;
        switch (num) {
        case PERF_MEM_LVLNUM_L1: d.served_by = ServedBy::L1; break;
        case PERF_MEM_LVLNUM_LFB:
        case PERF_MEM_LVLNUM_L2_MHB: d.served_by = ServedBy::FillBuffer; break;
        case PERF_MEM_LVLNUM_L2: d.served_by = ServedBy::L2; break;
        case PERF_MEM_LVLNUM_L3:
            // Intel marks lines from another socket's cache, and (0x0b) a
            // remote DRAM hit, with level L3 plus remote: the legacy bits
            // tell which.
            if (d.remote)
                d.served_by = (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2)) ? ServedBy::RemoteDram
                                                                                       : ServedBy::RemoteCache;
            else
                d.served_by = ServedBy::L3;
            break;
        case PERF_MEM_LVLNUM_L4: d.served_by = ServedBy::L4; break;
        case PERF_MEM_LVLNUM_MSC: d.served_by = ServedBy::MemorySideCache; break;
        case PERF_MEM_LVLNUM_ANY_CACHE:
            // AMD: hops 1 (HOPS_0) is another CCX of this node, even when
            // the remote bit is set; further hops leave the node.
            if (d.hops >= PERF_MEM_HOPS_1 || (d.remote && d.hops == 0))
                d.served_by = ServedBy::RemoteCache;
            else
                d.served_by = ServedBy::PeerCache;
            break;
        case PERF_MEM_LVLNUM_RAM:
            d.served_by = d.remote ? ServedBy::RemoteDram : ServedBy::LocalDram;
            break;
        case PERF_MEM_LVLNUM_PMEM: d.served_by = ServedBy::Pmem; break;
        case PERF_MEM_LVLNUM_CXL: d.served_by = ServedBy::Cxl; break;
        case PERF_MEM_LVLNUM_IO: d.served_by = ServedBy::Io; break;
        case PERF_MEM_LVLNUM_UNC: d.served_by = ServedBy::Uncached; break;
        default: d.served_by = ServedBy::Unknown; break;
        }
        return d;
    }
    if (d.missed || (lvl & PERF_MEM_LVL_NA)) return d;
    bool legacy_remote = false;
    d.served_by = from_legacy(lvl, legacy_remote);
    d.remote = d.remote || legacy_remote;
    return d;
}

}  // namespace stacksage::sampling
