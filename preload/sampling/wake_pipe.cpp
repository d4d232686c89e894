#include "preload/sampling/wake_pipe.hpp"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include "preload/node_file.hpp"

namespace stacksage::sampling {

namespace {

// Never changed: vmsplice without SPLICE_F_GIFT lends the page to the pipe
// until the byte is read.
const char kWakeByte = 1;

}  // namespace

bool WakePipe::open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    fd_[0] = preload::move_to_high_fd(fds[0]);
    fd_[1] = preload::move_to_high_fd(fds[1]);
    file_ = preload::FileIdentity::of(fd_[0]);
    return true;
}

int WakePipe::read_end_if_ours() const { return end_ours(0) ? fd_[0] : -1; }

void WakePipe::wake() const {
    if (!end_ours(1)) return;
    iovec byte{const_cast<char*>(&kWakeByte), 1};
    (void)::vmsplice(fd_[1], &byte, 1, SPLICE_F_NONBLOCK);
}

void WakePipe::drain() const {
    if (!end_ours(0)) return;
    char buf[64];
    iovec into{buf, sizeof buf};
    // vmsplice from a read end copies the pipe's bytes out (and consumes
    // them); on anything but a pipe it fails: an application's file is
    // never read.
    while (::vmsplice(fd_[0], &into, 1, SPLICE_F_NONBLOCK) > 0) {}
}

void WakePipe::close() {
    if (fd_[0] < 0) return;
    if (end_ours(0)) ::close(fd_[0]);
    if (end_ours(1)) ::close(fd_[1]);
    fd_[0] = fd_[1] = -1;
    file_ = preload::FileIdentity{};
}

}  // namespace stacksage::sampling
