// EventLog: this process's JSON Lines file under OUT/<host>/.
//
// The file is written through a shared mapping, without a system call per
// event. It grows in chunks (kChunk bytes, reserved on disk with fallocate
// and mapped MAP_SHARED); a writer reserves the byte range of its line with
// one atomic fetch_add on the next free offset and copies the complete line
// into the mapping. Stores to a shared file mapping are in the page cache at
// once, so whatever was recorded before a SIGKILL is in the file, and since
// every line has its own range, concurrent threads never interleave inside a
// line. Crossing the mapped end takes a slow path under a lock (grow the file,
// map the next chunk; chunks stay mapped until exit, as another thread may
// still be copying into one). finish() (normal exit, _exit, exec, a fatal
// signal) truncates the file to the bytes used; a process killed before that
// leaves a file that ends in NUL bytes, and a line whose copy a SIGKILL cut
// leaves NULs where its missing bytes would be. Readers skip NUL bytes
// (docs/event-log.md).
//
// Where a mapping cannot be had (a file system without fallocate, a log past
// kMaxChunks chunks, after finish()) the same reserved ranges are written
// with pwrite(2): one call per line, same guarantees, slower. A full disk
// (fallocate or pwrite failing) prints one message and the log goes quiet;
// the application runs on. So does a log whose file was removed (the output
// directory deleted while the process runs), noticed when the log must grow
// and at the end.
//
// Files are created with O_CREAT|O_EXCL|O_NOFOLLOW (OUT may be a shared /tmp:
// an existing file or a planted symlink is never followed or overwritten) and
// O_CLOEXEC (an exec'ed image opens its own log).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace stacksage::preload {

class EventLog {
public:
    static constexpr std::size_t kChunk = std::size_t{256} << 10;
    static constexpr std::size_t kMaxChunks = 16384;  // 4 GiB through the mapping
    // Room kept after the last line in the mapping, grown into only by a
    // stop note: a log that can no longer grow (a full disk) still says so
    // in itself (write_stop_note), in blocks fallocate already reserved.
    static constexpr std::size_t kStopNoteRoom = 256;

    // Opens OUT/<host>/ (creating <host>) and creates the log, named
    // rank-0003.pid-4711.jsonl when rank >= 0, pid-4711.jsonl otherwise; a
    // taken name (the pid's earlier image before an exec) gets ".1", ".2", ...
    // with no limit: the first free number, found in O(log n) look-ups.
    // On failure writes why into error and returns false.
    bool open(const char* out_dir, const char* host, long rank, int pid, char* error,
              std::size_t error_cap);
    // In the child of fork(): a new log in the same host directory. Only raw
    // system calls: the parent may have had other threads. The parent's
    // mapping, inherited, is unmapped here and never written by the child.
    bool reopen_in_child(long rank, int pid);

    // One complete line (ending in '\n'). Lock-free and system-call-free
    // unless the line crosses the mapped end; safe in signal handlers. After
    // a failure to grow the file the log goes quiet instead of retrying.
    bool write(const char* line, std::size_t len);

    // After a failure to grow or write (not a removed file): puts line (at
    // most kStopNoteRoom bytes) where the first lost line would have gone,
    // in the room kept for it, and keeps it at finish(). Once; false when
    // there is no room (the log never had its first chunk, or is not mapped)
    // or nothing failed.
    bool write_stop_note(const char* line, std::size_t len);
    // From the thread that writes the process's end (process_end: the
    // process is about to end): from now on only this thread's lines are
    // written, right after the lines reserved before; lines of other threads
    // (threads still being created while exit() runs) are left out and
    // counted, so that the log ends with process_end and has no NUL holes
    // left by threads that exit_group() stops half-way. Waits, at most about
    // 2 ms, for lines other threads had reserved but not yet copied. Once
    // only; async-signal-safe.
    void seal_for_end();
    // Lines of other threads left out since seal_for_end().
    std::uint64_t lines_after_end() const { return lines_after_end_.load(std::memory_order_relaxed); }

    // Truncates the file to the bytes used; writes after this go through
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
    bool is_open() const { return fd_ >= 0; }
    // A descriptor of the host directory this log was created in, checked
    // first: the application may have closed ours (a daemon closes every
    // descriptor) and got its number for a file or directory of its own; the
    // directory is then opened again by its path, if it is still the very
    // same one. -1 when it is gone. Not concurrent: at start-up, in a child
    // of fork.
    int host_dir();
    const char* file_name() const { return name_; }
    // 0 for the first log of this pid, n when n earlier images of the same
    // pid (before exec) already have logs.
    int image() const { return image_; }
    // Why the first failure failed (-errno), 0 when none did.
    long write_error() const { return write_error_; }
    // True while lines go into the mapping (false: the pwrite fallback).
    bool mapped() const { return use_mapping_.load(std::memory_order_relaxed); }

private:
    static constexpr std::uint64_t kFinished = std::uint64_t{1} << 63;
    static constexpr std::uint64_t kSealed = std::uint64_t{1} << 62;
    static constexpr std::uint64_t kFlags = kFinished | kSealed;

    bool create(long rank, int pid);
    bool same_file(int fd) const;
    bool same_host_dir(int fd) const;
    bool removed() const;  // our file has no name left (its directory was deleted)
    void report_removed();
    bool reopen_own_file();  // under the grow lock
    void reset_mapping();
    bool write_slow(std::uint64_t offset, std::uint64_t flags, const char* line, std::size_t len);
    void wait_for_lines_in_flight(std::uint64_t end);
    bool grow_to(std::uint64_t end);  // under the grow lock
    void copy_out(std::uint64_t offset, const char* line, std::size_t len);
    bool lock(bool wait);
    void unlock() { lock_owner_.store(0, std::memory_order_release); }
    void fail(long error, const char* what);
    void dropped_at(std::uint64_t offset);

    int host_dir_fd_ = -1;
    std::uint64_t host_dev_ = 0;  // identity of the host directory, checked before using it
    std::uint64_t host_ino_ = 0;
    std::atomic<int> fd_{-1};  // swapped by reopen_own_file under the grow lock
    long write_error_ = 0;
    int image_ = 0;
    bool quiet_ = false;
    std::uint64_t dev_ = 0;  // identity of our file, checked before growing it
    std::uint64_t ino_ = 0;
    char name_[96] = {};
    const char* out_dir_ = nullptr;  // for reopening our file by name (ProcessState's strings)
    const char* host_ = nullptr;

    // Next free offset; kFinished once finish() ran, kSealed once
    // seal_for_end() did (the offset then grows with lines left out).
    std::atomic<std::uint64_t> next_{0};
    // After seal_for_end(): the sealing thread's next offset, and its tid.
    std::atomic<std::uint64_t> sealed_next_{0};
    std::atomic<int> sealer_tid_{0};
    std::atomic<std::uint64_t> lines_after_end_{0};
    // Chunks [0, mapped_chunks_) are mapped at chunk_[i]; published with release.
    std::atomic<std::size_t> mapped_chunks_{0};
    std::atomic<bool> use_mapping_{false};
    std::atomic<bool> failed_{false};
    std::atomic<bool> stop_note_written_{false};
    std::atomic<int> lock_owner_{0};  // tid holding the grow lock, 0 when free
    // After a failure: the lowest offset of a line that was dropped (the
    // file is truncated there, not at the end of the reservations).
    std::atomic<std::uint64_t> failed_end_{~std::uint64_t{0}};
    char* chunk_[kMaxChunks] = {};
};

// Moves a descriptor of ours far above the ones the application uses, so that
// an application that opens and closes many files is less likely to collide
// with it: to 1000 and up, or, under a descriptor limit of 1100 or less, above
// the limit where the hard limit allows (the application then has all of its
// numbers to itself). Returns the new descriptor (the old one is closed), or fd.
int move_to_high_fd(int fd);

}  // namespace stacksage::preload
