// The drain thread's wake-up pipe.
//
// Any thread writes one byte to wake the drain thread; the drain thread polls
// the read end and empties it. The application may close both ends (a daemon
// closes every descriptor) and get the numbers for files of its own, at any
// moment, even between our identity check and our use. So the bytes go in
// and out with vmsplice(2), which works on pipes only: at a number that has
// become the application's regular file, directory or socket it fails
// (EBADF) and reads or writes nothing. The identity check (FileIdentity)
// still runs first, so a pipe of the application's is left alone too; and
// the ends live at high numbers (move_to_high_fd), away from the numbers an
// application reuses first.
#pragma once

#include "preload/kept_descriptor.hpp"

namespace stacksage::sampling {

// Pipe-only I/O (vmsplice): one byte into a pipe's write end; the bytes out
// of a pipe's read end. On any other file (a number the application took in
// the meantime) both do nothing at all: no byte written, none read, the
// offset unchanged.
void put_wake_byte(int fd);
void take_wake_bytes(int fd);

class WakePipe {
public:
    // Creates the pipe (close-on-exec, non-blocking); false when it cannot.
    bool open();
    bool is_open() const { return fd_[0] >= 0; }
    // The read end to poll while it is still ours, else -1.
    int read_end_if_ours() const;
    // One byte in, if the write end is still ours.
    void wake() const;
    // Empties the pipe (after poll said POLLIN on the read end).
    void drain() const;
    // Closes the ends still ours and forgets both numbers (a forked child).
    void close();

private:
    bool end_ours(int end) const { return file_.held_by(fd_[end]); }

    int fd_[2] = {-1, -1};
    preload::FileIdentity file_;  // one pipe: one identity for both ends
};

}  // namespace stacksage::sampling
