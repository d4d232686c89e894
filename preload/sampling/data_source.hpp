// Where a sampled memory access was served from: the kernel's
// perf_mem_data_src, decoded.
//
// The level-number fields (mem_lvl_num, mem_remote, mem_hops; Linux 4.14
// and later) are read first; the legacy mem_lvl bits only when the level
// number is absent or "not available". Both are filled differently by Intel
// PEBS and AMD IBS, and by kernel versions; the rules below follow the
// kernel's own tables (arch/x86/events/intel/ds.c, arch/x86/events/amd/ibs.c).
#pragma once

#include <cstdint>

namespace stacksage::sampling {

enum class ServedBy : std::uint8_t {
    Unknown = 0,      // no data source, or a miss at a level without saying who served it
    L1 = 1,
    FillBuffer = 2,   // LFB / L1 or L2 miss-handling buffer: the line was already on its way
    L2 = 3,
    L3 = 4,
    L4 = 5,
    PeerCache = 6,    // another core's cache in the same NUMA node
    RemoteCache = 7,  // a cache of another NUMA node or socket
    LocalDram = 8,
    RemoteDram = 9,
    Pmem = 10,
    Cxl = 11,
    MemorySideCache = 12,
    Io = 13,
    Uncached = 14,
};
inline constexpr int kServedByCount = 15;

// "unknown", "L1", "fill_buffer", "L2", "L3", "L4", "peer_cache",
// "remote_cache", "local_dram", "remote_dram", "pmem", "cxl",
// "memory_side_cache", "io", "uncached": the names files carry.
const char* served_by_name(ServedBy s);
bool served_by_from_name(const char* name, ServedBy& out);

enum class MemOp : std::uint8_t { Unknown = 0, Load = 1, Store = 2, Prefetch = 3, Exec = 4 };
inline constexpr int kMemOpCount = 5;
const char* mem_op_name(MemOp op);  // "unknown", "load", "store", "prefetch", "exec"
bool mem_op_from_name(const char* name, MemOp& out);

struct DataSource {
    ServedBy served_by = ServedBy::Unknown;
    MemOp op = MemOp::Unknown;
    bool remote = false;      // mem_remote, or implied by a legacy remote level
    std::uint8_t hops = 0;    // mem_hops: 0 none, 1 other core same node, 2 other node same socket,
                              // 3 other socket, 4 other board
    bool missed = false;      // a miss at the named level (the served level is then unknown)
    bool from_level_number = false;  // decoded from mem_lvl_num (else from legacy bits)
};

DataSource decode_data_source(std::uint64_t data_src);

}  // namespace stacksage::sampling
