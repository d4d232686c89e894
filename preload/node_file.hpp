// NodeFile: the recorder's side of one node file (OUT/<host>/node.events,
// node.samples, node.models; format in core/formats/node_file_format.hpp).
//
// Every process of the node opens the same file and maps its header page
// MAP_SHARED: reserving a region is one atomic fetch_add on the header's
// cursor, shared through the page cache by all of them, so no process ever
// waits for another. The first process creates the file under a private
// temporary name, writes the header and publishes it with link(2), so a
// process that finds the file finds it whole; of processes that start at
// once, one publishes and the others open what it published.
//
// Hostile directories (OUT may be a shared /tmp): every name is opened with
// O_NOFOLLOW|O_NONBLOCK and used only when fstat says it is a regular file
// with our header; a planted link, FIFO or foreign file at node.events is
// never followed, waited on or written, and the next name (node.1.events,
// node.2.events, ...) is used instead.
//
// Raw system calls only: usable before the recorder is initialised, in the
// child of fork() and in signal handlers (reserve, new_stream).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/formats/node_file_format.hpp"

namespace stacksage::preload {

class NodeFile {
public:
    static constexpr int kMaxNames = 8;  // node.events, node.1.events, ... node.7.events

    // Opens (creating and publishing it when absent) the node file of `kind`
    // in the host directory. On failure returns the error (-errno) of the
    // first name tried.
    long open(int host_dir_fd, formats::node_file::FileKind kind, const char* host);

    // The byte offset of a new region of `bytes` (a multiple of the page
    // size), reserved for the caller alone. Lock-free; async-signal-safe.
    std::uint64_t reserve(std::uint64_t bytes);
    // A stream number no other stream of this file has. Lock-free.
    std::uint64_t new_stream();

    // The application may have closed our descriptor: find the file again by
    // name in `dir_path` (absolute), only if it is still the very same file.
    bool reopen(const char* dir_path);
    bool same_file(int fd) const;
    // The file has no name left (its directory was deleted).
    bool removed() const;

    // Unmaps the header and closes the descriptor (a writer done with the file).
    void close();

    int fd() const { return fd_; }
    bool is_open() const { return fd_ >= 0 && header_ != nullptr; }
    const char* name() const { return name_; }

private:
    long create_or_open(int dir, const char* name, formats::node_file::FileKind kind, const char* host);
    bool adopt(long fd, formats::node_file::FileKind kind);

    int fd_ = -1;
    std::uint64_t dev_ = 0, ino_ = 0;
    formats::node_file::NodeFileHeader* header_ = nullptr;  // the shared header page
    char name_[32] = {};
};

// Writes `len` bytes as one whole stream of `file` (a process's sampling
// summary or model, written once at its end): one region of the size it
// needs, its header naming pid, rank and the event stream it belongs to, its
// length recorded. Raw system calls only. Returns 0 or -errno.
long write_whole_stream(NodeFile& file, std::int64_t pid, std::int64_t rank, std::uint64_t of_stream,
                        const char* data, std::size_t len);

// A region's header: `bytes` long, region `seq` of `stream`.
formats::node_file::RegionHeader region_header(std::uint64_t bytes, std::uint64_t stream, std::uint32_t seq,
                                               std::int64_t pid, std::int64_t rank, std::uint64_t of_stream);

// Moves a descriptor of ours far above the ones the application uses, so that
// an application that opens and closes many files is less likely to collide
// with it: to 1000 and up, or, under a descriptor limit of 1100 or less, above
// the limit where the hard limit allows (the application then has all of its
// numbers to itself). Returns the new descriptor (the old one is closed), or fd.
int move_to_high_fd(int fd);

// The file name of `kind`'s n-th choice: node.events, node.1.events, ...
void node_file_name(char* out, std::size_t cap, formats::node_file::FileKind kind, int n);

}  // namespace stacksage::preload
