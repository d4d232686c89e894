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
// runs on, and the stream still says so in itself: every line is written
// only with kStopNoteRoom bytes mapped after it, where the stop note goes
// (write_stop_note; a killed process's stream ends in NULs instead). So does a log whose file was removed (the output directory
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
    // Room kept after the last line in the mapping, grown into only by a
    // stop note: a stream that can no longer grow (a full disk, RLIMIT_FSIZE)
    // still says so in itself (write_stop_note), in blocks fallocate already
    // reserved.
    static constexpr std::size_t kStopNoteRoom = 256;

    // Opens OUT/<host>/ (creating <host>) and its node event file (creating
    // it when this is the node's first process), then this image's stream
    // (open_stream). On failure writes why into error and returns false.
    bool open(const char* out_dir, const char* host, long rank, int pid, char* error,
              std::size_t error_cap);
    // Opens a stream for this (new) process in the node file already open:
    // the one step every new process takes, in the child of fork() too
    // (called there on the child's first recorded event, whoever created the
    // child: fork, or a raw clone the new-process detector found). Only raw
    // system calls: the parent may have had other threads. The parent's
    // regions, inherited, are unmapped here and never written by the child;
    // the node file's descriptor and header are shared with it (the
    // descriptor found again by path when the application closed it).
    bool reopen_in_child(long rank, int pid);

    // One complete line (ending in '\n'). Lock-free and system-call-free
    // unless the line crosses the mapped end; safe in signal handlers. After
    // a failure to grow the stream the log goes quiet instead of retrying.
    bool write(const char* line, std::size_t len);

    // After a failure to grow or write (not a removed file): puts line (at
    // most kStopNoteRoom bytes) where the first lost line would have gone,
    // in the room kept for it, and keeps it at finish(). Once; false when
    // there is no room (the stream never had its first region, or is not
    // mapped) or nothing failed.
    bool write_stop_note(const char* line, std::size_t len);
    // From the thread that writes the process's end (process_end: the
    // process is about to end): from now on only this thread's lines are
    // written, right after the lines reserved before; lines of other threads
    // (threads still being created while exit() runs) are left out and
    // counted, so that the stream ends with process_end and has no NUL holes
    // left by threads that exit_group() stops half-way. Waits, at most about
    // 10 ms, for lines other threads had reserved but not yet copied. Once
    // only; async-signal-safe.
    void seal_for_end();
    // Lines of other threads left out since seal_for_end().
    std::uint64_t lines_after_end() const { return lines_after_end_.load(std::memory_order_relaxed); }

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
    // A descriptor of the host directory this log's node file is in, checked
    // first: the application may have closed ours (a daemon closes every
    // descriptor) and got its number for a file or directory of its own; the
    // directory is then opened again by its path, if it is still the very
    // same one. -1 when it is gone. Not concurrent: at start-up, in a child
    // of fork, at exit.
    int host_dir();
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
    static constexpr std::uint64_t kSealed = std::uint64_t{1} << 62;
    static constexpr std::uint64_t kFlags = kFinished | kSealed;

    bool open_stream(long rank, int pid);
    bool same_file(int fd) const { return node_.same_file(fd); }
    bool same_host_dir(int fd) const;
    void report_removed();
    bool reopen_own_file();  // under the grow lock
    void reset_mapping();
    bool write_slow(std::uint64_t offset, std::uint64_t flags, const char* line, std::size_t len);
    void wait_for_lines_in_flight(std::uint64_t end);
    bool copied_whole(std::uint64_t begin, std::uint64_t end) const;
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
    std::uint64_t host_dev_ = 0;  // identity of the host directory, checked before using it
    std::uint64_t host_ino_ = 0;
    long host_dir_error_ = 0;  // why host_dir() last found no directory (-errno)
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

    // Next free offset in the stream; kFinished once finish() ran, kSealed
    // once seal_for_end() did (the offset then grows with lines left out).
    std::atomic<std::uint64_t> next_{0};
    // After seal_for_end(): the sealing thread's next offset, and its tid.
    std::atomic<std::uint64_t> sealed_next_{0};
    std::atomic<int> sealer_tid_{0};
    std::atomic<std::uint64_t> lines_after_end_{0};
    // Regions [0, regions_) are reserved at region_offset_[i]; the first
    // mapped_regions_ of them are mapped at region_[i] (published with release).
    std::atomic<std::size_t> regions_{0};
    std::atomic<std::size_t> mapped_regions_{0};
    std::atomic<bool> use_mapping_{false};
    std::atomic<bool> failed_{false};
    std::atomic<bool> stop_note_written_{false};
    std::atomic<int> lock_owner_{0};  // tid holding the grow lock, 0 when free
    // After a failure: the lowest offset of a line that was dropped (the
    // stream's length is recorded there, not at the end of the reservations).
    std::atomic<std::uint64_t> failed_end_{~std::uint64_t{0}};
    std::uint64_t region_offset_[kMaxRegions] = {};
    char* region_[kMaxRegions] = {};
};


}  // namespace stacksage::preload
