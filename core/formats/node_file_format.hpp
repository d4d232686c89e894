// The node file: the streams of every process image of one node in one file
// of the run directory (OUT/<host>/node.events for the event logs,
// node.samples for the sampling summaries, node.models for the process
// models). Shared by the recorder (preload/node_file.hpp writes it), the
// readers (parsers/node_file_reader.hpp) and the synthetic runs of the tests
// and benchmarks. Documented for users in docs/event-log.md ("The node file").
//
//   [NodeFileHeader, padded to kNodeHeaderBytes]
//   [RegionHeader][data ...]  [RegionHeader][data ...]  ...
//
// A region is reserved by one atomic fetch_add on the header's region cursor
// (the header page is mapped MAP_SHARED by every process of the node), so
// processes never wait for one another. A stream is one process image's
// bytes (one event log): the data of its regions, in the order of their
// `seq`, concatenated; a stream that outgrows its region chains another one.
// Regions start at multiples of kRegionAlign; the recorder's are whole pages
// (kFirstRegionBytes, then kNextRegionBytes), so that each can be mapped.
//
// What a reader must tolerate: a region whose header is all zeros (its
// process was killed between reserving it and writing the header: the
// reader looks for the next header at the following multiples of
// kRegionAlign, whose magic holds bytes no JSON line does), a region beyond
// the file's end (reserved, never grown into), and a stream without an end
// (the process was killed: its last region ends in NULs, handled as in a
// single log).
//
// Little-endian, fixed-size; plain types only (the recorder uses no libstdc++
// runtime). The atomics are accessed through std::atomic_ref or the
// recorder's own atomics on the mapped page.
#pragma once

#include <cstdint>

namespace stacksage::formats::node_file {

inline constexpr char kFileMagic[16] = {'\xff', 's', 't', 'a', 'c', 'k', 's', 'a',
                                        'g', 'e', '-', 'n', 'o', 'd', 'e', '\n'};
inline constexpr std::uint32_t kVersion = 1;
inline constexpr std::uint64_t kNodeHeaderBytes = 4096;  // the header page: the first region starts here
inline constexpr std::uint64_t kRegionAlign = 64;        // every region starts at a multiple of this
inline constexpr std::uint64_t kFirstRegionBytes = std::uint64_t{16} << 10;  // a stream's first region
inline constexpr std::uint64_t kNextRegionBytes = std::uint64_t{256} << 10;  // each one chained after it
// A region claiming more than this is damage, not a region.
inline constexpr std::uint64_t kMaxRegionBytes = std::uint64_t{1} << 30;

enum class FileKind : std::uint32_t { events = 1, samples = 2, models = 3 };

struct NodeFileHeader {
    char magic[16];               // kFileMagic
    std::uint32_t version;        // kVersion
    std::uint32_t header_bytes;   // kNodeHeaderBytes: where the first region starts
    std::uint32_t kind;           // FileKind
    std::uint32_t region_align;   // kRegionAlign
    std::uint64_t next_region;    // atomic: the byte offset of the next region to reserve
    std::uint64_t next_stream;    // atomic: the last stream number given out (streams are 1, 2, ...)
    char host[64];                // NUL-padded node name, for a file found out of its directory
};
static_assert(sizeof(NodeFileHeader) == 112);

inline constexpr char kRegionMagic[8] = {'\xff', 'S', 'S', 'R', 'E', 'G', 'N', '\n'};

// Set in RegionHeader::stream_end (of a stream's first region) once the stream
// ended normally: the low bits are then the stream's length in bytes.
inline constexpr std::uint64_t kStreamEnded = std::uint64_t{1} << 63;

struct RegionHeader {
    char magic[8];                // kRegionMagic
    std::uint32_t version;        // kVersion
    std::uint32_t header_bytes;   // sizeof(RegionHeader): its data follows
    std::uint64_t region_bytes;   // header and data, a multiple of kRegionAlign
    std::uint64_t stream;         // the stream this region belongs to (1, 2, ...)
    std::uint32_t seq;            // its place in the stream: 0, 1, 2, ...
    std::uint32_t of_stream;      // node.samples, node.models: the node.events stream it belongs to; else 0
    std::int64_t pid;
    std::int64_t rank;            // -1: none
    std::uint64_t stream_end;     // in region 0: kStreamEnded | length once the stream ended; 0 before
};
static_assert(sizeof(RegionHeader) == 64);

// The data bytes of a region of `region_bytes`.
constexpr std::uint64_t data_bytes(std::uint64_t region_bytes) { return region_bytes - sizeof(RegionHeader); }

// The size of the recorder's region number `seq` of a stream.
constexpr std::uint64_t recorder_region_bytes(std::uint32_t seq) {
    return seq == 0 ? kFirstRegionBytes : kNextRegionBytes;
}

// Where region `seq` of a recorder's stream begins in the stream's bytes.
constexpr std::uint64_t recorder_region_start(std::uint64_t seq) {
    return seq == 0 ? 0 : data_bytes(kFirstRegionBytes) + (seq - 1) * data_bytes(kNextRegionBytes);
}

// The region of a recorder's stream that holds byte `offset` of the stream.
constexpr std::uint64_t recorder_region_of(std::uint64_t offset) {
    return offset < data_bytes(kFirstRegionBytes)
               ? 0
               : 1 + (offset - data_bytes(kFirstRegionBytes)) / data_bytes(kNextRegionBytes);
}

}  // namespace stacksage::formats::node_file
