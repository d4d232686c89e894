#include "preload/sampling/wake_pipe.hpp"

#include <errno.h>
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

void put_wake_byte(int fd) {
    const int saved = errno;  // called from the application's threads
    iovec byte{const_cast<char*>(&kWakeByte), 1};
    (void)::vmsplice(fd, &byte, 1, SPLICE_F_NONBLOCK);
    errno = saved;
}

void take_wake_bytes(int fd) {
    char buf[64];
    iovec into{buf, sizeof buf};
    // vmsplice from a read end copies the pipe's bytes out (and consumes
    // them); on anything but a pipe it fails with EBADF.
    const int saved = errno;
    while (::vmsplice(fd, &into, 1, SPLICE_F_NONBLOCK) > 0) {}
    errno = saved;
}

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
    if (end_ours(1)) put_wake_byte(fd_[1]);
}

void WakePipe::drain() const {
    if (end_ours(0)) take_wake_bytes(fd_[0]);
}

void WakePipe::close() {
    if (fd_[0] < 0) return;
    if (end_ours(0)) ::close(fd_[0]);
    if (end_ours(1)) ::close(fd_[1]);
    fd_[0] = fd_[1] = -1;
    file_ = preload::FileIdentity{};
}

}  // namespace stacksage::sampling
