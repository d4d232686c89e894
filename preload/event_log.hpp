// EventLog: this process image's stream in its node's event file,
// OUT/<host>/node.events (preload/node_file.hpp; format in
// core/formats/node_file_format.hpp). One file per node, whatever the number
// of processes: each process image writes its own stream into it.
//
// The stream is written through shared mappings, without a system call per
// event. It is a chain of regions of the node file (the first of 16 KiB, then
// 256 KiB each), each reserved by one atomic fetch_add on the file's shared
// cursor, its blocks reserved with fallocate and mapped MAP_SHARED. A writer
// reserves the byte range of its line in the stream with one atomic
// fetch_add on the stream's next free offset and copies the complete line
// into the mapping (across two regions when it straddles their boundary).
// Stores to a shared file mapping are in the page cache at once, so whatever
// was recorded before a SIGKILL is in the file, and since every line has its
// own range, concurrent threads never interleave inside a line. Crossing the
// mapped end takes a slow path under a lock (reserve, grow and map the next
// region; regions stay mapped until exit, as another thread may still be
// copying into one). finish() (normal exit, _exit, exec, a fatal signal)
// records the stream's length in its first region and frees the unused end
// of its last one (a hole punched in the file); a process killed before that
// leaves a stream that ends in NUL bytes, and a line whose copy a SIGKILL cut
// leaves NULs where its missing bytes would be. Readers skip NUL bytes
// (docs/event-log.md).
//
// Where a mapping cannot be had (a file system without fallocate, after
// finish()) the same reserved ranges are written with pwrite(2): one call
// per piece of a line, same guarantees, slower. A full disk (fallocate or
// pwrite failing) prints one message and the log goes quiet; the application
// runs on. So does a log whose file was removed (the output directory
// deleted while the process runs), noticed when the log must grow and at the
// end.
//
// The node file is found or created with O_NOFOLLOW|O_NONBLOCK and used only
// when it is a regular file with our header (node_file.hpp); its descriptor
// is O_CLOEXEC (an exec'ed image opens its own stream).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/node_file.hpp"

namespace stacksage::preload {

class EventLog {
public:
    static constexpr std::size_t kMaxRegions = 16384;  // 4 GiB of one stream

    // Opens OUT/<host>/ (creating <host>) and its node event file (creating
    // it when this is the node's first process), then this image's stream
    // (open_stream). On failure writes why into error and returns false.
    bool open(const char* out_dir, const char* host, long rank, int pid, char* error,
              std::size_t error_cap);
    // Opens a stream for this (new) process in the node file already open:
    // the one step every new process takes, in the child of fork() too
    // (called there on the child's first recorded event, whoever created the
    // child). Only raw system calls: the parent may have had other threads.
    // The parent's regions, inherited, are unmapped here and never written
    // by the child; the node file's descriptor and header are shared with it.
    bool reopen_in_child(long rank, int pid);

    // One complete line (ending in '\n'). Lock-free and system-call-free
    // unless the line crosses the mapped end; safe in signal handlers. After
    // a failure to grow the stream the log goes quiet instead of retrying.
    bool write(const char* line, std::size_t len);

    // Records the stream's length in the file; writes after this go through
    // pwrite(2). From a signal handler (from_signal) it gives up rather than
    // wait for the grow lock. A log whose file was removed meanwhile (rm -rf
    // of the output directory) is reported here, once.
    void finish(bool from_signal = false);

    // False when this log no longer records: writing it failed (full disk,
    // a descriptor that could not be found again), or its file was removed
    // while the process ran, which is said once on stderr here. Async-signal-
    // safe (one fstat).
    bool still_recording();

    void set_quiet(bool quiet) { quiet_ = quiet; }
    bool is_open() const { return node_.fd() >= 0 && stream_ != 0; }
    int host_dir_fd() const { return host_dir_fd_; }
    // The node file's name (node.events; node.1.events, ... where that
    // name was taken by something else).
    const char* file_name() const { return node_.name(); }
    // This image's stream in it: 1, 2, ... in the order the node's processes
    // opened them.
    std::uint64_t stream() const { return stream_; }
    // Where this stream's regions are in the node file, in stream order (the
    // model writer reads its own stream from these, not the whole file).
    const std::uint64_t* region_offsets() const { return region_offset_; }
    std::size_t region_count() const { return regions_.load(std::memory_order_acquire); }
    // The node file, for the other streams a process writes at its end (its
    // sampling summary, its model) with write_whole_stream.
    NodeFile& node_file() { return node_; }
    // Why the first failure failed (-errno), 0 when none did.
    long write_error() const { return write_error_; }
    // True while lines go into the mapping (false: the pwrite fallback).
    bool mapped() const { return use_mapping_.load(std::memory_order_relaxed); }

private:
    static constexpr std::uint64_t kFinished = std::uint64_t{1} << 63;

    bool open_stream(long rank, int pid);
    bool same_file(int fd) const { return node_.same_file(fd); }
    void report_removed();
    bool reopen_own_file();  // under the grow lock
    void reset_mapping();
    bool write_slow(std::uint64_t offset, bool finished, const char* line, std::size_t len);
    bool add_regions(std::uint64_t end, bool finished);  // under the grow lock
    bool covered_by_mapping(std::uint64_t end) const;
    void copy_out(std::uint64_t offset, const char* line, std::size_t len);
    long pwrite_out(std::uint64_t offset, const char* line, std::size_t len);
    void set_stream_end(std::uint64_t length, bool from_signal);
    void free_unused_tail(std::uint64_t length);
    bool lock(bool wait);
    void unlock() { lock_owner_.store(0, std::memory_order_release); }
    void fail(long error, const char* what);
    void dropped_at(std::uint64_t offset);

    int host_dir_fd_ = -1;
    NodeFile node_;
    long write_error_ = 0;
    bool quiet_ = false;
    const char* out_dir_ = nullptr;  // for reopening our file by name (ProcessState's strings)
    const char* host_ = nullptr;
    char host_path_[4096 + 300] = {};  // out_dir_/host_

    std::uint64_t stream_ = 0;
    long rank_ = -1;
    int pid_ = 0;
    std::uint64_t stream_end_ = 0;  // the length last recorded by finish() or a write after it

    // Next free offset in the stream; kFinished once finish() ran.
    std::atomic<std::uint64_t> next_{0};
    // Regions [0, regions_) are reserved at region_offset_[i]; the first
    // mapped_regions_ of them are mapped at region_[i] (published with release).
    std::atomic<std::size_t> regions_{0};
    std::atomic<std::size_t> mapped_regions_{0};
    std::atomic<bool> use_mapping_{false};
    std::atomic<bool> failed_{false};
    std::atomic<int> lock_owner_{0};  // tid holding the grow lock, 0 when free
    // After a failure: the lowest offset of a line that was dropped (the
    // stream's length is recorded there, not at the end of the reservations).
    std::atomic<std::uint64_t> failed_end_{~std::uint64_t{0}};
    std::uint64_t region_offset_[kMaxRegions] = {};
    char* region_[kMaxRegions] = {};
};


}  // namespace stacksage::preload
