// EventLog: this process's append-only JSON Lines file under OUT/<host>/.
//
// Crash safety comes from the shape of the writes, not from flushing: each
// event is one complete line handed to the kernel in a single write(2) on an
// O_APPEND descriptor, so whatever was recorded before a SIGKILL is in the
// file, and concurrent threads never interleave inside a line.
//
// Files are created with O_CREAT|O_EXCL|O_NOFOLLOW (OUT may be a shared /tmp:
// an existing file or a planted symlink is never followed or overwritten) and
// O_CLOEXEC (an exec'ed image opens its own log).
#pragma once

#include <cstddef>

namespace stacksage::preload {

class EventLog {
public:
    // Opens OUT/<host>/ (creating <host>) and creates the log, named
    // rank-0003.pid-4711.jsonl when rank >= 0, pid-4711.jsonl otherwise; a
    // taken name (the pid's earlier image before an exec) gets ".1", ".2", ...
    // On failure writes why into error and returns false.
    bool open(const char* out_dir, const char* host, long rank, int pid, char* error,
              std::size_t error_cap);
    // In the child of fork(): a new log in the same host directory. Only
    // raw system calls: the parent may have had other threads.
    bool reopen_in_child(long rank, int pid);

    // One line, one write(2). After the first failure (disk full, descriptor
    // closed by the application) the log goes quiet instead of retrying.
    bool write(const char* line, std::size_t len);

    bool is_open() const { return fd_ >= 0; }
    int host_dir_fd() const { return host_dir_fd_; }
    const char* file_name() const { return name_; }
    // 0 for the first log of this pid, n when n earlier images of the same
    // pid (before exec) already have logs.
    int image() const { return image_; }
    // Why the first failed write failed (-errno), 0 when none did.
    long write_error() const { return write_error_; }

private:
    bool create(long rank, int pid);

    int host_dir_fd_ = -1;
    int fd_ = -1;
    long write_error_ = 0;
    int image_ = 0;
    char name_[96] = {};
};

// Moves a descriptor of ours far above the ones the application uses, so that
// an application that opens and closes many files is less likely to collide
// with it. Returns the new descriptor (the old one is closed), or fd.
int move_to_high_fd(int fd);

}  // namespace stacksage::preload
