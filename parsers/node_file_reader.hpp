// Reading a node file (OUT/<host>/node.events, node.samples, node.models;
// format in core/formats/node_file_format.hpp): the streams of the node's
// process images, each as the text one process wrote.
//
// The file is read whole (through input_file.hpp: a FIFO, a device or a file
// over the limit is refused by name) and walked region by region. Damage is
// tolerated and said: a region whose header is zeros or foreign (its process
// was killed between reserving it and writing the header) is stepped over by
// looking for the next region header at the following kRegionAlign
// boundaries; a region cut by the file's end keeps what is there; a stream
// missing a region in its chain gets a NUL byte in the gap, so that the
// pieces of lines on either side are torn lines to the event-log reader,
// never glued into one. A stream without a recorded end (its process was
// killed) is all its regions' data: its unused tail is NULs, which the
// event-log reader skips.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "core/formats/node_file_format.hpp"
#include "core/result.hpp"

namespace stacksage {

struct NodeStream {
    std::uint64_t stream = 0;     // its number in the file: 1, 2, ... in the order they were opened
    std::int64_t pid = -1;
    std::int64_t rank = -1;       // -1: none
    std::uint64_t of_stream = 0;  // node.samples, node.models: the event stream it belongs to
    bool ended = false;           // its length was recorded (the process got to its end)
    std::size_t regions = 0;
    std::size_t missing_regions = 0;  // gaps in its chain (damaged or never written)
    std::string_view text;        // valid as long as the NodeFile it came from
};

struct NodeFile {
    formats::node_file::FileKind kind = formats::node_file::FileKind::events;
    std::string host;                 // the header's host name
    std::vector<NodeStream> streams;  // in stream order
    std::size_t damaged_regions = 0;  // headers that were zeros or foreign: stepped over
    std::string bytes;                // the file
    std::deque<std::string> joined;   // the texts of streams of more than one region
};

// Reads the node file at path (label: the name messages use).
// \return its streams.
// \return an Error "<label>: ...; the file is skipped" when it cannot be read
//         or is no node file of `kind` (wrong magic, version or kind).
Result<NodeFile> read_node_file(const std::string& path, const std::string& label,
                                formats::node_file::FileKind kind);
// One stream's text, read from the regions at `offsets` only (its regions in
// stream order, as its writer knows them), not the whole file: what a
// process reads back of its own stream at exit, whatever the number of
// processes on the node. Each region's header must name `stream` and its
// place; the file must be a regular file (opened non-blocking, no link
// followed).
// \return the text (cut at the recorded length when the stream ended).
// \return an Error "<label>: ..." when a region is not the stream's.
Result<std::string> read_node_stream(const std::string& path, const std::string& label, std::uint64_t stream,
                                     const std::uint64_t* offsets, std::size_t count);

// As read_node_file, on bytes already in memory (tests).
Result<NodeFile> parse_node_file(std::string bytes, const std::string& label, formats::node_file::FileKind kind);

}  // namespace stacksage
