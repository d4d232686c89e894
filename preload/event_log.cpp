#include "preload/event_log.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

namespace {

long set_nofile_limit(const struct rlimit& lim) {
    return raw::syscall6(SYS_prlimit64, 0, RLIMIT_NOFILE, reinterpret_cast<long>(&lim), 0);
}

// A low descriptor limit (ulimit -n 64): our descriptors go above it, where
// they stay valid (the limit only refuses new numbers at or above it), so the
// application keeps every number below its limit for itself and runs out at
// exactly the same point as without us. That needs the soft limit raised for
// the dup alone (allowed up to the hard limit), and put back at once. -1 when
// the hard limit leaves no room.
long dup_above_soft_limit(int fd, const struct rlimit& lim) {
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max <= lim.rlim_cur) return -1;
    struct rlimit raised = lim;
    raised.rlim_cur = lim.rlim_max == RLIM_INFINITY || lim.rlim_max - lim.rlim_cur > 64
                          ? lim.rlim_cur + 64
                          : lim.rlim_max;
    if (set_nofile_limit(raised) != 0) return -1;
    long high = raw::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<long>(lim.rlim_cur));
    set_nofile_limit(lim);
    return high;
}

}  // namespace

int move_to_high_fd(int fd) {
    struct rlimit lim{};
    if (raw::getrlimit(RLIMIT_NOFILE, &lim) != 0) return fd;
    long high = -1;
    if (lim.rlim_cur > 1100) {
        if (fd >= 1000) return fd;
        high = raw::fcntl(fd, F_DUPFD_CLOEXEC, 1000);
    } else {
        if (static_cast<rlim_t>(fd) >= lim.rlim_cur) return fd;  // already above it
        high = dup_above_soft_limit(fd, lim);
        // No room above the limit: at least out of the way of the low numbers.
        if (high < 0 && lim.rlim_cur / 2 > static_cast<rlim_t>(fd))
            high = raw::fcntl(fd, F_DUPFD_CLOEXEC, static_cast<long>(lim.rlim_cur / 2));
    }
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
    struct stat st{};
    if (raw::fstat(host_dir_fd_, &st) == 0) {
        host_dev_ = st.st_dev;
        host_ino_ = st.st_ino;
    }
    out_dir_ = out_dir;
    host_ = host;
    if (!create(rank, pid)) {
        msg.add("cannot create an event log in '").add(out_dir).add("/").add(host).add("' (").add(
            strerrordesc_np(static_cast<int>(-write_error_))).add(")");
        raw::close(host_dir_fd_);
        host_dir_fd_ = -1;
        return false;
    }
    return true;
}

namespace {

// How long a writer waits for another thread that is growing the file before
// it writes its line with pwrite instead.
constexpr int kLockYields = 100000;
constexpr long kMadvPopulateWrite = 23;  // MADV_POPULATE_WRITE, Linux >= 5.14

long pwrite_all(int fd, const char* buf, std::size_t len, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < len) {
        long n = raw::pwrite(fd, buf + done, len - done, offset + done);
        if (n == -EINTR) continue;
        if (n <= 0) return n < 0 ? n : -EIO;
        done += static_cast<std::size_t>(n);
    }
    return static_cast<long>(done);
}

}  // namespace

namespace {

// The log's name for an image: rank-0003.pid-4711.jsonl, then
// rank-0003.pid-4711.1.jsonl, .2, ... for the images after exec.
void log_name(char* out, std::size_t cap, long rank, int pid, unsigned image) {
    TextBuffer name(out, cap);
    namespace layout = formats::run_layout;
    if (rank >= 0) name.add(layout::kRankPrefix).add_uint(static_cast<unsigned long>(rank), 4).add(".");
    name.add(layout::kPidPrefix).add_uint(static_cast<unsigned>(pid));
    if (image > 0) name.add(".").add_uint(image);
    name.add(layout::kEventLogSuffix);
}

// Whether anything has the name in dir (a file, a link, a FIFO: O_PATH opens
// none of them for real, and follows no link).
bool name_taken(int dir, const char* name) {
    long fd = raw::openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) raw::close(static_cast<int>(fd));
    return fd >= 0 || fd != -ENOENT;
}

// The images of one pid take .1, .2, ... in turn: the first free number is
// found by doubling, then halving, in about 2*log2(n) look-ups (a process
// that execs itself thousands of times pays microseconds per exec, not a
// look-up per earlier image).
unsigned first_free_image(int dir, long rank, int pid, char* name, std::size_t cap) {
    constexpr unsigned kLargest = 1u << 30;
    unsigned taken = 0, free = 1;  // image 0 is known to be taken
    for (;;) {
        log_name(name, cap, rank, pid, free);
        if (!name_taken(dir, name)) break;
        taken = free;
        if (free >= kLargest) return kLargest;
        free *= 2;
    }
    while (free - taken > 1) {
        const unsigned mid = taken + (free - taken) / 2;
        log_name(name, cap, rank, pid, mid);
        if (name_taken(dir, name))
            taken = mid;
        else
            free = mid;
    }
    return free;
}

}  // namespace

bool EventLog::create(long rank, int pid) {
    // No limit on the number of images: a name found free may be taken by
    // the time it is created (or the names have gaps), so a few names after
    // it are tried in turn, and then the search starts again from there.
    unsigned image = 0;
    for (int round = 0; round < 64; ++round) {
        for (int tries = 0; tries < 16; ++tries, ++image) {
            log_name(name_, sizeof name_, rank, pid, image);
            // O_RDWR, not O_APPEND: the file is mapped, and each line goes
            // to the range its writer reserved.
            long fd = raw::openat(host_dir_fd_, name_,
                                  O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
            if (fd >= 0) {
                fd_ = move_to_high_fd(static_cast<int>(fd));
                write_error_ = 0;
                image_ = static_cast<int>(image);
                struct stat st{};
                if (raw::fstat(fd_, &st) == 0) {
                    dev_ = st.st_dev;
                    ino_ = st.st_ino;
                }
                // The first chunk now: no other thread writes yet (before
                // Ready, or in a child of fork), so no lock.
                use_mapping_.store(true, std::memory_order_relaxed);
                grow_to(1);
                return true;
            }
            write_error_ = fd;
            if (fd != -EEXIST) return false;
        }
        const unsigned next = first_free_image(host_dir_fd_, rank, pid, name_, sizeof name_);
        if (next > image) image = next;
    }
    return false;
}

void EventLog::reset_mapping() {
    const std::size_t n = mapped_chunks_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n && i < kMaxChunks; ++i) {
        if (chunk_[i] != nullptr) raw::munmap(chunk_[i], kChunk);
        chunk_[i] = nullptr;
    }
    mapped_chunks_.store(0, std::memory_order_relaxed);
    next_.store(0, std::memory_order_relaxed);
    sealed_next_.store(0, std::memory_order_relaxed);
    sealer_tid_.store(0, std::memory_order_relaxed);
    lines_after_end_.store(0, std::memory_order_relaxed);
    use_mapping_.store(false, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    stop_note_written_.store(false, std::memory_order_relaxed);
    lock_owner_.store(0, std::memory_order_relaxed);
    failed_end_.store(~std::uint64_t{0}, std::memory_order_relaxed);
}

bool EventLog::reopen_in_child(long rank, int pid) {
    // The parent's log is the parent's: its mapping (inherited, shared with
    // the parent's file) is dropped before anything is written. So is its
    // descriptor, unless the number is the application's by now.
    reset_mapping();
    if (same_file(fd_)) raw::close(fd_);
    fd_ = -1;
    write_error_ = 0;
    if (host_dir() < 0) {
        write_error_ = -ENOENT;
        return false;
    }
    return create(rank, pid);
}

int EventLog::host_dir() {
    if (same_host_dir(host_dir_fd_)) return host_dir_fd_;
    // Never closed here: the number may be the application's.
    host_dir_fd_ = -1;
    if (out_dir_ == nullptr || host_ == nullptr) return -1;
    char path[4096 + 512];
    TextBuffer p(path, sizeof path);
    p.add(out_dir_).add("/").add(host_);
    if (p.size() + 1 >= sizeof path) return -1;
    // O_NOFOLLOW and the identity check: OUT may be a shared /tmp where the
    // directory was replaced meanwhile.
    long fd = raw::openat(AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return -1;
    if (!same_host_dir(static_cast<int>(fd))) {
        raw::close(static_cast<int>(fd));
        return -1;
    }
    host_dir_fd_ = move_to_high_fd(static_cast<int>(fd));
    return host_dir_fd_;
}

void EventLog::copy_out(std::uint64_t offset, const char* line, std::size_t len) {
    const std::size_t index = static_cast<std::size_t>(offset / kChunk);
    const std::size_t in = static_cast<std::size_t>(offset % kChunk);
    const std::size_t first = len < kChunk - in ? len : kChunk - in;
    std::memcpy(chunk_[index] + in, line, first);
    if (first < len) std::memcpy(chunk_[index + 1], line + first, len - first);
}

bool EventLog::write(const char* line, std::size_t len) {
    if (len == 0) return true;
    const std::uint64_t old = next_.fetch_add(len, std::memory_order_relaxed);
    const std::uint64_t flags = old & kFlags;
    const std::uint64_t offset = old & ~kFlags;
    if (flags == 0 && len <= kChunk) {
        const std::size_t have = mapped_chunks_.load(std::memory_order_acquire);
        if (offset + len + kStopNoteRoom <= static_cast<std::uint64_t>(have) * kChunk) {
            copy_out(offset, line, len);
            return true;
        }
    }
    return write_slow(offset, flags, line, len);
}

void EventLog::seal_for_end() {
    if (fd_ < 0) return;
    sealer_tid_.store(raw::gettid(), std::memory_order_relaxed);
    const std::uint64_t old = next_.fetch_or(kSealed, std::memory_order_acq_rel);
    if ((old & kSealed) != 0) return;
    sealed_next_.store(old & ~kFlags, std::memory_order_release);
    if ((old & kFinished) == 0) wait_for_lines_in_flight(old & ~kFlags);
}

void EventLog::wait_for_lines_in_flight(std::uint64_t end) {
    // A line is in flight between its writer's fetch_add and the end of its
    // copy: nanoseconds, unless the writer was preempted there (or is
    // growing the file for it). The last 64 KiB before the end are looked
    // at; a range not mapped yet is being grown under the lock. At most
    // kPatienceNs: a preempted writer waits for a CPU, on a busy machine a
    // scheduler tick or two. The wait is paid only when lines are in flight.
    constexpr std::uint64_t kWindow = 64 << 10;
    constexpr long kPatienceNs = 10'000'000;
    const std::uint64_t begin = end > kWindow ? end - kWindow : 0;
    struct timespec start{}, now{};
    raw::syscall6(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<long>(&start));
    for (int round = 0;; ++round) {
        if (failed_.load(std::memory_order_acquire) || !use_mapping_.load(std::memory_order_relaxed)) return;
        const std::uint64_t mapped =
            static_cast<std::uint64_t>(mapped_chunks_.load(std::memory_order_acquire)) * kChunk;
        bool complete = end <= mapped;
        for (std::uint64_t at = begin; at < end && complete;) {
            const std::size_t index = static_cast<std::size_t>(at / kChunk);
            const std::size_t in = static_cast<std::size_t>(at % kChunk);
            const std::size_t n = static_cast<std::size_t>(end - at < kChunk - in ? end - at : kChunk - in);
            complete = std::memchr(chunk_[index] + in, '\0', n) == nullptr;
            at += n;
        }
        if (complete) return;
        raw::syscall6(SYS_clock_gettime, CLOCK_MONOTONIC, reinterpret_cast<long>(&now));
        if ((now.tv_sec - start.tv_sec) * 1'000'000'000L + (now.tv_nsec - start.tv_nsec) > kPatienceNs) return;
        // Yield first (the writer may be waiting for this CPU), then sleep a
        // little (it may be waiting for the other CPUs).
        if (round < 16) {
            raw::syscall6(SYS_sched_yield);
        } else {
            struct timespec pause{0, 50'000};
            raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
        }
    }
}

void EventLog::dropped_at(std::uint64_t offset) {
    // The stop note stands where the first lost line began: later losses are behind it.
    if (stop_note_written_.load(std::memory_order_acquire)) return;
    std::uint64_t seen = failed_end_.load(std::memory_order_relaxed);
    while (offset < seen &&
           !failed_end_.compare_exchange_weak(seen, offset, std::memory_order_acq_rel)) {
    }
}

bool EventLog::write_slow(std::uint64_t offset, std::uint64_t flags, const char* line,
                          std::size_t len) {
    if (fd_ < 0) return false;
    if ((flags & kSealed) != 0) {
        // The process's end is written: only the thread writing it goes on,
        // right after the lines reserved before the seal.
        if (raw::gettid() != sealer_tid_.load(std::memory_order_relaxed)) {
            lines_after_end_.fetch_add(1, std::memory_order_relaxed);
            return false;
        }
        offset = sealed_next_.fetch_add(len, std::memory_order_acq_rel);
    }
    const bool finished = (flags & kFinished) != 0;
    if (failed_.load(std::memory_order_acquire)) {
        dropped_at(offset);
        return false;
    }
    if (!finished && len <= kChunk && use_mapping_.load(std::memory_order_relaxed)) {
        if (lock(true)) {
            const bool in_map = grow_to(offset + len + kStopNoteRoom);
            unlock();
            // Chunks are never unmapped, and finish() truncates to no less
            // than the end of a range reserved before it.
            if (in_map) {
                copy_out(offset, line, len);
                return true;
            }
            if (failed_.load(std::memory_order_acquire)) {
                dropped_at(offset);
                return false;
            }
        }
    }
    // The pwrite fallback, under the lock: past finish() the line must come
    // after its truncation, and a descriptor the application closed is
    // replaced only under the lock. (A signal handler that interrupted the
    // lock's holder goes ahead without it.)
    const bool locked = lock(true);
    long n = same_file(fd_) || (locked && reopen_own_file()) ? 0 : -EBADF;
    if (n == 0) n = pwrite_all(fd_, line, len, offset);
    if (locked) unlock();
    if (n < 0) {
        dropped_at(offset);
        fail(n, "cannot be written");
        return false;
    }
    return true;
}

bool EventLog::grow_to(std::uint64_t end) {
    for (;;) {
        const std::size_t have = mapped_chunks_.load(std::memory_order_relaxed);
        if (end <= static_cast<std::uint64_t>(have) * kChunk) return true;
        // After finish() the file keeps the size it was truncated to.
        if ((next_.load(std::memory_order_relaxed) & kFinished) != 0) return false;
        if (have >= kMaxChunks || !use_mapping_.load(std::memory_order_relaxed)) {
            use_mapping_.store(false, std::memory_order_relaxed);
            return false;
        }
        // The application may have closed our descriptor (a daemon closes
        // them all) and reused its number: find our file again by its name,
        // and only if it is still the very same file.
        long rc = same_file(fd_) || reopen_own_file() ? 0 : -EBADF;
        if (rc < 0) {
            fail(rc, "cannot grow");
            return false;
        }
        // Removed (rm -rf of the output directory): growing a file nobody
        // will read only takes disk space until exit.
        if (removed()) {
            report_removed();
            return false;
        }
        const std::uint64_t at = static_cast<std::uint64_t>(have) * kChunk;
        // fallocate, not ftruncate: the blocks are reserved now, so a full
        // disk is an error here instead of a SIGBUS on a store later.
        do {
            rc = raw::fallocate(fd_, 0, at, kChunk);
        } while (rc == -EINTR);
        if (rc == -EOPNOTSUPP || rc == -ENOSYS) {
            use_mapping_.store(false, std::memory_order_relaxed);  // pwrite from now on
            return false;
        }
        if (rc < 0) {
            fail(rc, "cannot grow");
            return false;
        }
        // Right after the previous chunk if that address is free: the kernel
        // then merges the two into one mapping (no growing count of VMAs).
        void* hint = have > 0 ? chunk_[have - 1] + kChunk : nullptr;
        long addr = raw::mmap(hint, kChunk, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, at);
        if (addr < 0 && addr > -4096) {
            use_mapping_.store(false, std::memory_order_relaxed);
            return false;
        }
        // Every page of a chunk is written; fault them in now, in one call,
        // rather than one fault per 4 KiB in later writers (on a VM a first
        // write to a file page costs several microseconds). Not the first
        // chunk: a short-lived process should not pay for pages it never
        // uses. Linux >= 5.14; elsewhere the pages fault in as written.
        if (have > 0) raw::syscall6(SYS_madvise, addr, static_cast<long>(kChunk), kMadvPopulateWrite);
        chunk_[have] = reinterpret_cast<char*>(addr);
        mapped_chunks_.store(have + 1, std::memory_order_release);
    }
}

bool EventLog::same_file(int fd) const {
    struct stat st{};
    return fd >= 0 && raw::fstat(fd, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

bool EventLog::same_host_dir(int fd) const {
    struct stat st{};
    return fd >= 0 && raw::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == host_dev_ &&
           st.st_ino == host_ino_;
}

bool EventLog::removed() const {
    // Only our own file's count of names: the number may hold the
    // application's file by now (one it unlinked itself, say).
    struct stat st{};
    return fd_ >= 0 && raw::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ &&
           st.st_nlink == 0;
}

void EventLog::report_removed() {
    if (failed_.exchange(true, std::memory_order_acq_rel)) return;
    write_error_ = -ENOENT;
    if (quiet_) return;
    char buf[5200];
    TextBuffer msg(buf, sizeof buf);
    msg.add("stacksage: the event log ");
    if (out_dir_ != nullptr && host_ != nullptr) msg.add(out_dir_).add("/").add(host_).add("/");
    msg.add(name_).add(" was removed while the process ran (was the output directory deleted?); "
                       "the events of this process are lost, the application runs on\n");
    tell_stderr_once(msg.c_str(), msg.size());
}

bool EventLog::still_recording() {
    if (fd_ < 0 || failed_.load(std::memory_order_acquire)) return false;
    if (!removed()) return true;
    report_removed();
    return false;
}

bool EventLog::reopen_own_file() {
    if (out_dir_ == nullptr || host_ == nullptr) return false;
    char path[4096 + 512];
    TextBuffer p(path, sizeof path);
    p.add(out_dir_).add("/").add(host_).add("/").add(name_);
    if (p.size() + 1 >= sizeof path) return false;
    // The directories on the way may have been replaced (OUT may be a shared
    // /tmp): look first without opening anything (O_PATH: a FIFO or a device
    // planted there is neither opened nor woken), and open for writing only
    // what is our very file; non-blocking and never as a controlling tty.
    long probe = raw::openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (probe < 0) return false;
    const bool ours = same_file(static_cast<int>(probe));
    raw::close(static_cast<int>(probe));
    if (!ours) return false;
    long fd = raw::openat(AT_FDCWD, path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return false;
    if (!same_file(static_cast<int>(fd))) {
        raw::close(static_cast<int>(fd));
        return false;
    }
    fd_ = move_to_high_fd(static_cast<int>(fd));
    return true;
}

bool EventLog::lock(bool wait) {
    const int me = raw::gettid();
    for (int i = 0;; ++i) {
        int expected = 0;
        if (lock_owner_.compare_exchange_strong(expected, me, std::memory_order_acquire))
            return true;
        // Held by this very thread: a signal handler interrupted it.
        if (expected == me || !wait || i >= kLockYields) return false;
        raw::syscall6(SYS_sched_yield);
    }
}

bool EventLog::write_stop_note(const char* line, std::size_t len) {
    if (fd_ < 0 || len > kStopNoteRoom || !failed_.load(std::memory_order_acquire) || write_error_ == -ENOENT)
        return false;
    if (stop_note_written_.exchange(true, std::memory_order_acq_rel)) return false;
    if (!lock(true)) return false;
    // Every line below the first lost one was written, and each was written
    // only with kStopNoteRoom mapped after it: the note fits there.
    const std::uint64_t at = failed_end_.load(std::memory_order_acquire);
    const std::uint64_t mapped = static_cast<std::uint64_t>(mapped_chunks_.load(std::memory_order_acquire)) * kChunk;
    const bool fits = at != ~std::uint64_t{0} && at + len <= mapped && (next_.load() & kFinished) == 0;
    if (fits) {
        copy_out(at, line, len);
        failed_end_.store(at + len, std::memory_order_release);  // finish() truncates after it
    }
    unlock();
    return fits;
}

void EventLog::finish(bool from_signal) {
    if (fd_ < 0) return;
    still_recording();  // a removed file is said now, at the latest
    if (!lock(!from_signal)) return;
    const std::uint64_t old = next_.fetch_or(kFinished, std::memory_order_acq_rel);
    if ((old & kFinished) == 0) {
        std::uint64_t used = (old & kSealed) != 0 ? sealed_next_.load(std::memory_order_acquire) : old & ~kFlags;
        const std::uint64_t dropped = failed_end_.load(std::memory_order_acquire);
        if (dropped < used) used = dropped;
        // Never truncate a file that is not ours (a reused descriptor number).
        if (same_file(fd_) || (!from_signal && reopen_own_file())) raw::ftruncate(fd_, used);
    }
    unlock();
}

void EventLog::fail(long error, const char* what) {
    if (failed_.exchange(true, std::memory_order_acq_rel)) return;
    write_error_ = error;
    if (quiet_) return;
    char buf[512];
    TextBuffer msg(buf, sizeof buf);
    msg.add("stacksage: the event log ").add(name_).add(" ").add(what).add(" (").add(
        strerrordesc_np(static_cast<int>(-error))).add("); later events of this process are not "
                                                        "recorded, the application runs on\n");
    tell_stderr_once(msg.c_str(), msg.size());
}

}  // namespace stacksage::preload
