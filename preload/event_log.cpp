#include "preload/event_log.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>

#include <cstring>

#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

int move_to_high_fd(int fd) {
    struct rlimit lim{};
    if (raw::getrlimit(RLIMIT_NOFILE, &lim) != 0) return fd;
    rlim_t floor = lim.rlim_cur > 1100 ? 1000 : lim.rlim_cur / 2;
    if (floor <= static_cast<rlim_t>(fd)) return fd;
    long high = raw::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<long>(floor));
    if (high < 0) return fd;
    raw::close(fd);
    return static_cast<int>(high);
}

bool EventLog::open(const char* out_dir, const char* host, long rank, int pid, char* error,
                    std::size_t error_cap) {
    TextBuffer msg(error, error_cap);
    long out_fd = raw::openat(AT_FDCWD, out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (out_fd < 0) {
        msg.add("output directory '").add(out_dir).add("' cannot be opened (").add(
            strerrordesc_np(static_cast<int>(-out_fd))).add(")");
        return false;
    }
    long rc = raw::mkdirat(static_cast<int>(out_fd), host, 0755);
    if (rc < 0 && rc != -EEXIST) {
        msg.add("cannot create '").add(out_dir).add("/").add(host).add("' (").add(
            strerrordesc_np(static_cast<int>(-rc))).add(")");
        raw::close(static_cast<int>(out_fd));
        return false;
    }
    // O_NOFOLLOW: a symlink planted where the host directory should be is refused.
    long dir_fd = raw::openat(static_cast<int>(out_fd), host,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    raw::close(static_cast<int>(out_fd));
    if (dir_fd < 0) {
        msg.add("cannot open '").add(out_dir).add("/").add(host).add("' (").add(
            strerrordesc_np(static_cast<int>(-dir_fd))).add(")");
        return false;
    }
    host_dir_fd_ = move_to_high_fd(static_cast<int>(dir_fd));
    if (!create(rank, pid)) {
        msg.add("cannot create an event log in '").add(out_dir).add("/").add(host).add("' (").add(
            strerrordesc_np(static_cast<int>(-write_error_))).add(")");
        raw::close(host_dir_fd_);
        host_dir_fd_ = -1;
        return false;
    }
    return true;
}

bool EventLog::create(long rank, int pid) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        TextBuffer name(name_, sizeof name_);
        if (rank >= 0) name.add("rank-").add_uint(static_cast<unsigned long>(rank), 4).add(".");
        name.add("pid-").add_uint(static_cast<unsigned>(pid));
        if (attempt > 0) name.add(".").add_uint(static_cast<unsigned>(attempt));
        name.add(".jsonl");
        long fd = raw::openat(host_dir_fd_, name_,
                              O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                              0644);
        if (fd >= 0) {
            fd_ = move_to_high_fd(static_cast<int>(fd));
            write_error_ = 0;
            image_ = attempt;
            return true;
        }
        write_error_ = fd;
        if (fd != -EEXIST) return false;
    }
    return false;
}

bool EventLog::reopen_in_child(long rank, int pid) {
    if (fd_ >= 0) raw::close(fd_);  // the parent's log is the parent's
    fd_ = -1;
    if (host_dir_fd_ < 0) return false;
    return create(rank, pid);
}

bool EventLog::write(const char* line, std::size_t len) {
    int fd = fd_;
    if (fd < 0) return false;
    long n = raw::write_all(fd, line, len);
    if (n < 0) {
        write_error_ = n;
        fd_ = -1;
        return false;
    }
    return true;
}

}  // namespace stacksage::preload
