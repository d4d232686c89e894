// The raw sample file (<log stem>.samples.bin): every decoded sample, for
// analyses the aggregated DataPaths cannot answer. Documented for users in
// docs/sample-file.md; shared by the writer
// (preload/sampling/sample_file_writer.hpp) and the reader
// (parsers/sample_file_reader.hpp). Little-endian, fixed-size records,
// written in blocks so that a killed process leaves whole blocks behind.
#pragma once

#include <cstdint>

namespace stacksage::sampling {

inline constexpr char kSampleFileMagic[8] = {'S', 'S', 'A', 'G', 'E', 'S', 'M', 'P'};
inline constexpr std::uint32_t kSampleFileVersion = 1;
inline constexpr std::uint32_t kSampleBlockMagic = 0x4B4C4253;  // "SBLK"

struct SampleFileHeader {
    char magic[8];                 // kSampleFileMagic
    std::uint32_t version;         // kSampleFileVersion
    std::uint32_t header_bytes;    // sizeof(SampleFileHeader): readers skip what they do not know
    std::uint32_t record_bytes;    // sizeof(SampleFileRecord)
    std::uint32_t pid;
    std::uint64_t start_monotonic_ns;  // CLOCK_MONOTONIC when sampling started (perf's clock for `time`)
    std::uint64_t start_realtime_ns;
    char host[24];                 // NUL-padded, truncated host name
};
static_assert(sizeof(SampleFileHeader) == 64);

struct SampleBlockHeader {
    std::uint32_t magic;         // kSampleBlockMagic
    std::uint32_t record_count;  // records that follow
    std::uint64_t sequence;      // 0, 1, 2, ... in write order
};
static_assert(sizeof(SampleBlockHeader) == 16);

enum SampleRecordFlags : std::uint8_t {
    kSampleRemote = 1,  // the data source said remote
    kSampleMissed = 2,  // a miss at the named level; the serving level is unknown
};

struct SampleFileRecord {
    std::uint64_t time;      // perf timestamp (CLOCK_MONOTONIC ns unless the kernel says otherwise)
    std::uint64_t ip;
    std::uint64_t addr;      // data address; 0 when the backend has none (cpu-clock)
    std::uint64_t data_src;  // the raw perf_mem_data_src
    std::uint32_t weight;    // latency weight (cycles), var1 of WEIGHT_STRUCT
    std::uint16_t weight_var2, weight_var3;
    std::uint32_t tid;
    std::uint32_t cpu;
    std::int16_t node;       // NUMA node of addr; -1 unknown
    std::uint8_t backend;    // sampling::Backend
    std::uint8_t served_by;  // sampling::ServedBy, decoded
    std::uint8_t op;         // sampling::MemOp, decoded
    std::uint8_t flags;      // SampleRecordFlags
    std::uint8_t hops;
    std::uint8_t reserved;
};
static_assert(sizeof(SampleFileRecord) == 56);

}  // namespace stacksage::sampling
