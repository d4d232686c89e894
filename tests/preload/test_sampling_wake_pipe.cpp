// The sampler's wake-up pipe (preload/sampling/wake_pipe.hpp): it wakes the
// drain thread, and once the application has its numbers (a daemon closed
// every descriptor and opened its own files) it never reads, writes or
// closes what is there. The pipe-only I/O is checked on its own too: the
// identity check and the use are two calls, and the application may take the
// number between them; a regular file must then come out untouched.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "preload/sampling/wake_pipe.hpp"

using namespace stacksage::sampling;

namespace {

// The application's file: a line at offset 0, descriptor kept.
struct AppFile {
    int fd = -1;
    AppFile() {
        char path[] = "/tmp/wake-pipe-app-XXXXXX";
        fd = ::mkstemp(path);
        ::unlink(path);
        EXPECT_EQ(::write(fd, "file 0003\n", 10), 10);
        ::lseek(fd, 0, SEEK_SET);
    }
    ~AppFile() { ::close(fd); }
    std::string content() const {
        char buf[64] = {};
        const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
        return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
    }
    off_t offset() const { return ::lseek(fd, 0, SEEK_CUR); }
};

bool readable(int fd) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

// The numbers of both ends, found through what the pipe lets us see.
int write_end_of(int read_end) {
    rlimit lim{};
    ::getrlimit(RLIMIT_NOFILE, &lim);
    const int last = lim.rlim_cur > 65536 ? 65536 : static_cast<int>(lim.rlim_cur) + 64;
    for (int fd = 3; fd < last; ++fd) {
        if (fd == read_end) continue;
        struct stat a{}, b{};
        if (::fstat(fd, &a) == 0 && ::fstat(read_end, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev)
            return fd;
    }
    return -1;
}

}  // namespace

TEST(SamplingWakePipe, WakesAndIsEmptiedAgain) {
    WakePipe pipe;
    ASSERT_TRUE(pipe.open());
    const int read_end = pipe.read_end_if_ours();
    ASSERT_GE(read_end, 0);
    EXPECT_FALSE(readable(read_end));
    pipe.wake();
    pipe.wake();
    EXPECT_TRUE(readable(read_end));
    pipe.drain();
    EXPECT_FALSE(readable(read_end));
    pipe.close();
    EXPECT_EQ(pipe.read_end_if_ours(), -1);
}

TEST(SamplingWakePipe, LivesAboveTheNumbersAnApplicationReusesFirst) {
    WakePipe pipe;
    ASSERT_TRUE(pipe.open());
    rlimit lim{};
    ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
    // preload/node_file.hpp's move_to_high_fd: 1000 and up, or, under a low
    // limit, above it (or at least above its half).
    const rlim_t floor = lim.rlim_cur > 1100 ? 1000 : lim.rlim_cur / 2;
    EXPECT_GE(static_cast<rlim_t>(pipe.read_end_if_ours()), floor);
    pipe.close();
}

// closefrom(3) and the application's files at both numbers.
TEST(SamplingWakePipe, NumbersTheApplicationTookAreLeftAlone) {
    WakePipe pipe;
    ASSERT_TRUE(pipe.open());
    const int read_end = pipe.read_end_if_ours();
    const int write_end = write_end_of(read_end);
    ASSERT_GE(write_end, 0);
    AppFile at_read_end, at_write_end;
    ASSERT_EQ(::dup2(at_read_end.fd, read_end), read_end);
    ASSERT_EQ(::dup2(at_write_end.fd, write_end), write_end);
    EXPECT_EQ(pipe.read_end_if_ours(), -1);
    pipe.wake();
    pipe.drain();
    pipe.close();
    EXPECT_EQ(at_read_end.content(), "file 0003\n");
    EXPECT_EQ(at_read_end.offset(), 0);
    EXPECT_EQ(at_write_end.content(), "file 0003\n");
    EXPECT_EQ(at_write_end.offset(), 0);
    EXPECT_EQ(::fcntl(read_end, F_GETFD), 0) << "the application's descriptor was closed";
    EXPECT_EQ(::fcntl(write_end, F_GETFD), 0) << "the application's descriptor was closed";
    ::close(read_end);
    ::close(write_end);
}

// The use itself, as when the number changes hands after the check: on a
// regular file nothing is read (the offset stays at 0) and nothing written.
TEST(SamplingWakePipe, ThePipeOnlyIoLeavesARegularFileUntouched) {
    AppFile file;
    take_wake_bytes(file.fd);
    EXPECT_EQ(file.offset(), 0);
    put_wake_byte(file.fd);
    EXPECT_EQ(file.content(), "file 0003\n");
    EXPECT_EQ(file.offset(), 0);
}

TEST(SamplingWakePipe, ThePipeOnlyIoMovesBytesThroughAPipe) {
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_NONBLOCK), 0);
    put_wake_byte(fds[1]);
    EXPECT_TRUE(readable(fds[0]));
    take_wake_bytes(fds[0]);
    EXPECT_FALSE(readable(fds[0]));
    ::close(fds[0]);
    ::close(fds[1]);
}
