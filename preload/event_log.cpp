#include "preload/event_log.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include <cstddef>
#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/text.hpp"

namespace stacksage::preload {

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
    TextBuffer(host_path_, sizeof host_path_).add(out_dir).add("/").add(host);
    rc = node_.open(host_dir_fd_, formats::node_file::FileKind::events, host);
    if (rc < 0 || !open_stream(rank, pid)) {
        if (rc >= 0) rc = write_error_;
        write_error_ = rc;
        msg.add("cannot create an event log in '").add(out_dir).add("/").add(host).add("' (").add(
            strerrordesc_np(static_cast<int>(-rc))).add(")");
        raw::close(host_dir_fd_);
        host_dir_fd_ = -1;
        return false;
    }
    return true;
}

namespace {

namespace nf = formats::node_file;

// How long a writer waits for another thread that is growing the stream
// before it writes its line with pwrite instead.
constexpr int kLockYields = 100000;
constexpr long kMadvPopulateWrite = 23;  // MADV_POPULATE_WRITE, Linux >= 5.14
constexpr std::uint64_t kPage = 4096;


constexpr std::uint64_t kStreamEndField = offsetof(nf::RegionHeader, stream_end);

}  // namespace

bool EventLog::open_stream(long rank, int pid) {
    // No other thread writes yet (before Ready, or in a child of fork): no lock.
    rank_ = rank;
    pid_ = pid;
    stream_ = node_.new_stream();
    stream_end_ = 0;
    write_error_ = 0;
    use_mapping_.store(true, std::memory_order_relaxed);
    if (!add_regions(1, false) && regions_.load(std::memory_order_relaxed) == 0) {
        if (write_error_ == 0) write_error_ = -EIO;
        stream_ = 0;
        return false;
    }
    return true;
}

void EventLog::reset_mapping() {
    const std::size_t n = mapped_regions_.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n && i < kMaxRegions; ++i) {
        if (region_[i] != nullptr) raw::munmap(region_[i], nf::recorder_region_bytes(static_cast<std::uint32_t>(i)));
        region_[i] = nullptr;
    }
    mapped_regions_.store(0, std::memory_order_relaxed);
    regions_.store(0, std::memory_order_relaxed);
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
    // The parent's stream is the parent's: its regions (inherited, shared
    // with the parent's file) are dropped before anything is written.
    reset_mapping();
    stream_ = 0;
    write_error_ = 0;
    // The application may have closed our descriptors (a daemon closes them
    // all) and reused their numbers: the host directory is checked (and
    // found again by path) here; the node file's descriptor is, by
    // open_stream, before the stream's first region is reserved.
    if (host_dir() < 0) {
        write_error_ = host_dir_error_;
        return false;
    }
    if (!node_.is_open()) {
        write_error_ = -EBADF;
        return false;
    }
    return open_stream(rank, pid);
}

int EventLog::host_dir() {
    if (same_host_dir(host_dir_fd_)) return host_dir_fd_;
    // Never closed here: the number may be the application's.
    host_dir_fd_ = -1;
    host_dir_error_ = -ENOENT;
    if (out_dir_ == nullptr || host_path_[0] == '\0') return -1;
    // O_NOFOLLOW and the identity check: OUT may be a shared /tmp where the
    // directory was replaced meanwhile.
    long fd = raw::openat(AT_FDCWD, host_path_, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        host_dir_error_ = fd;  // gone, or no descriptor left (EMFILE)
        return -1;
    }
    if (!same_host_dir(static_cast<int>(fd))) {
        raw::close(static_cast<int>(fd));
        return -1;  // another directory by that name: ours is gone
    }
    host_dir_fd_ = move_to_high_fd(static_cast<int>(fd));
    return host_dir_fd_;
}

bool EventLog::same_host_dir(int fd) const {
    struct stat st{};
    return fd >= 0 && raw::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == host_dev_ &&
           st.st_ino == host_ino_;
}

bool EventLog::covered_by_mapping(std::uint64_t end) const {
    const std::size_t have = mapped_regions_.load(std::memory_order_acquire);
    return end <= nf::recorder_region_start(have);
}

void EventLog::copy_out(std::uint64_t offset, const char* line, std::size_t len) {
    while (len > 0) {
        const std::uint64_t k = nf::recorder_region_of(offset);
        const std::uint64_t in = offset - nf::recorder_region_start(k);
        const std::uint64_t room = nf::data_bytes(nf::recorder_region_bytes(static_cast<std::uint32_t>(k))) - in;
        const std::size_t n = len < room ? len : static_cast<std::size_t>(room);
        std::memcpy(region_[k] + sizeof(nf::RegionHeader) + in, line, n);
        offset += n;
        line += n;
        len -= n;
    }
}

long EventLog::pwrite_out(std::uint64_t offset, const char* line, std::size_t len) {
    while (len > 0) {
        const std::uint64_t k = nf::recorder_region_of(offset);
        if (k >= regions_.load(std::memory_order_acquire)) return -ENOSPC;
        const std::uint64_t in = offset - nf::recorder_region_start(k);
        const std::uint64_t room = nf::data_bytes(nf::recorder_region_bytes(static_cast<std::uint32_t>(k))) - in;
        const std::size_t n = len < room ? len : static_cast<std::size_t>(room);
        const long rc = raw::pwrite_all(node_.fd(), line, n, region_offset_[k] + sizeof(nf::RegionHeader) + in);
        if (rc < 0) return rc;
        offset += n;
        line += n;
        len -= n;
    }
    return 0;
}

bool EventLog::write(const char* line, std::size_t len) {
    if (len == 0) return true;
    const std::uint64_t old = next_.fetch_add(len, std::memory_order_relaxed);
    const std::uint64_t flags = old & kFlags;
    const std::uint64_t offset = old & ~kFlags;
    // Each line leaves kStopNoteRoom mapped after it, for the stop note.
    if (flags == 0 && covered_by_mapping(offset + len + kStopNoteRoom)) {
        copy_out(offset, line, len);
        return true;
    }
    return write_slow(offset, flags, line, len);
}

void EventLog::seal_for_end() {
    if (node_.fd() < 0 || stream_ == 0) return;
    sealer_tid_.store(raw::gettid(), std::memory_order_relaxed);
    const std::uint64_t old = next_.fetch_or(kSealed, std::memory_order_acq_rel);
    if ((old & kSealed) != 0) return;
    sealed_next_.store(old & ~kFlags, std::memory_order_release);
    if ((old & kFinished) == 0) wait_for_lines_in_flight(old & ~kFlags);
}

// Reads bytes other threads are copying into the mapping at this moment, on
// purpose (a zero byte is a line not yet copied), so not through memchr,
// which ThreadSanitizer checks as a plain read racing with their memcpy:
// volatile loads in a function it does not instrument.
__attribute__((no_sanitize("thread"))) static bool has_zero_byte(const volatile char* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
        if (p[i] == '\0') return true;
    return false;
}

bool EventLog::copied_whole(std::uint64_t begin, std::uint64_t end) const {
    if (end > nf::recorder_region_start(mapped_regions_.load(std::memory_order_acquire))) return false;
    while (begin < end) {
        const std::uint64_t k = nf::recorder_region_of(begin);
        const std::uint64_t in = begin - nf::recorder_region_start(k);
        const std::uint64_t room = nf::data_bytes(nf::recorder_region_bytes(static_cast<std::uint32_t>(k))) - in;
        const std::size_t n = static_cast<std::size_t>(end - begin < room ? end - begin : room);
        if (has_zero_byte(region_[k] + sizeof(nf::RegionHeader) + in, n)) return false;
        begin += n;
    }
    return true;
}

void EventLog::wait_for_lines_in_flight(std::uint64_t end) {
    // A line is in flight between its writer's fetch_add and the end of its
    // copy: nanoseconds, unless the writer was preempted there (or is
    // growing the stream for it). The last 64 KiB before the end are looked
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
        if (copied_whole(begin, end)) return;
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
    if (node_.fd() < 0 || stream_ == 0) return false;
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
    if (!finished && use_mapping_.load(std::memory_order_relaxed)) {
        if (lock(true)) {
            const bool in_map = add_regions(offset + len + kStopNoteRoom, false) &&
                                covered_by_mapping(offset + len + kStopNoteRoom);
            unlock();
            // Regions are never unmapped, and finish() records no less than
            // the end of a range reserved before it.
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
    // The pwrite fallback, under the lock: past finish() the stream's
    // recorded length must grow with the line, and a descriptor the
    // application closed is replaced only under the lock. (A signal handler
    // that interrupted the lock's holder goes ahead without it.)
    const bool locked = lock(true);
    long n = same_file(node_.fd()) || (locked && reopen_own_file()) ? 0 : -EBADF;
    if (n == 0 && locked && !add_regions(offset + len, true) && failed_.load(std::memory_order_acquire)) n = -EIO;
    if (n == 0) n = pwrite_out(offset, line, len);
    if (n == 0 && finished && locked && offset + len > stream_end_) set_stream_end(offset + len, false);
    if (locked) unlock();
    if (n < 0) {
        dropped_at(offset);
        fail(n, "cannot be written");
        return false;
    }
    return true;
}

bool EventLog::add_regions(std::uint64_t end, bool finished) {
    for (;;) {
        const std::size_t have = regions_.load(std::memory_order_relaxed);
        if (end <= nf::recorder_region_start(have)) return true;
        if (have >= kMaxRegions) {
            fail(-EFBIG, "is full (4 GiB in one process)");
            return false;
        }
        // The application may have closed our descriptor (a daemon closes
        // them all) and reused its number: find our file again by its name,
        // and only if it is still the very same file.
        long rc = same_file(node_.fd()) || reopen_own_file() ? 0 : -EBADF;
        if (rc < 0) {
            fail(rc, "cannot grow");
            return false;
        }
        // Removed (rm -rf of the output directory): growing a file nobody
        // will read only takes disk space until exit.
        if (node_.removed()) {
            report_removed();
            return false;
        }
        const std::uint32_t seq = static_cast<std::uint32_t>(have);
        const std::uint64_t bytes = nf::recorder_region_bytes(seq);
        const std::uint64_t at = node_.reserve(bytes);
        bool map = !finished && use_mapping_.load(std::memory_order_relaxed) &&
                   mapped_regions_.load(std::memory_order_relaxed) == have;
        if (map) {
            // fallocate, not ftruncate: the blocks are reserved now, so a
            // full disk is an error here instead of a SIGBUS on a store later.
            do {
                rc = raw::fallocate(node_.fd(), 0, at, bytes);
            } while (rc == -EINTR);
            if (rc == -EOPNOTSUPP || rc == -ENOSYS) {
                use_mapping_.store(false, std::memory_order_relaxed);  // pwrite from now on
                map = false;
            } else if (rc < 0) {
                fail(rc, "cannot grow");
                return false;
            }
        }
        const nf::RegionHeader header = region_header(bytes, stream_, seq, pid_, rank_, 0);
        char* base = nullptr;
        if (map) {
            long addr = raw::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, node_.fd(), at);
            if (addr < 0 && addr > -4096) {
                use_mapping_.store(false, std::memory_order_relaxed);
            } else {
                base = reinterpret_cast<char*>(addr);
                // Every page of a 256 KiB region is written; fault them in
                // now, in one call, rather than one fault per 4 KiB in later
                // writers. Not the first region: a short-lived process
                // should not pay for pages it never uses. Linux >= 5.14.
                if (seq > 0) raw::syscall6(SYS_madvise, addr, static_cast<long>(bytes), kMadvPopulateWrite);
                std::memcpy(base, &header, sizeof header);
            }
        }
        if (base == nullptr) {
            rc = raw::pwrite_all(node_.fd(), reinterpret_cast<const char*>(&header), sizeof header, at);
            if (rc < 0) {
                fail(rc, "cannot grow");
                return false;
            }
        }
        region_offset_[have] = at;
        region_[have] = base;
        regions_.store(have + 1, std::memory_order_release);
        if (base != nullptr) mapped_regions_.store(have + 1, std::memory_order_release);
    }
}

void EventLog::report_removed() {
    if (failed_.exchange(true, std::memory_order_acq_rel)) return;
    write_error_ = -ENOENT;
    if (quiet_) return;
    char buf[5200];
    TextBuffer msg(buf, sizeof buf);
    msg.add("stacksage: the event log ");
    if (out_dir_ != nullptr && host_ != nullptr) msg.add(out_dir_).add("/").add(host_).add("/");
    msg.add(node_.name()).add(" was removed while the process ran (was the output directory deleted?); "
                              "the events of this process are lost, the application runs on\n");
    tell_stderr_once(msg.c_str(), msg.size());
}

bool EventLog::still_recording() {
    if (node_.fd() < 0 || stream_ == 0 || failed_.load(std::memory_order_acquire)) return false;
    if (!node_.removed()) return true;
    report_removed();
    return false;
}

bool EventLog::reopen_own_file() { return out_dir_ != nullptr && node_.reopen(host_path_); }

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

void EventLog::set_stream_end(std::uint64_t length, bool from_signal) {
    if (regions_.load(std::memory_order_acquire) == 0) return;
    stream_end_ = length;
    const std::uint64_t value = nf::kStreamEnded | length;
    if (region_[0] != nullptr) {
        auto* header = reinterpret_cast<nf::RegionHeader*>(region_[0]);
        __atomic_store_n(&header->stream_end, value, __ATOMIC_RELEASE);
        return;
    }
    // Never written into a file that is not ours (a reused descriptor number).
    if (same_file(node_.fd()) || (!from_signal && reopen_own_file()))
        raw::pwrite_all(node_.fd(), reinterpret_cast<const char*>(&value), sizeof value, region_offset_[0] + kStreamEndField);
}

void EventLog::free_unused_tail(std::uint64_t length) {
    // The rest of the last region is never read: give its blocks back (the
    // file keeps its size; the reader stops at the recorded length).
    constexpr int kPunchHole = 0x02 | 0x01;  // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
    const std::size_t have = regions_.load(std::memory_order_acquire);
    for (std::uint64_t k = nf::recorder_region_of(length); k < have; ++k) {
        const std::uint64_t start = nf::recorder_region_start(k);
        const std::uint64_t used = length > start ? length - start : 0;
        const std::uint64_t from = (region_offset_[k] + sizeof(nf::RegionHeader) + used + kPage - 1) / kPage * kPage;
        const std::uint64_t to = region_offset_[k] + nf::recorder_region_bytes(static_cast<std::uint32_t>(k));
        if (from < to) raw::fallocate(node_.fd(), kPunchHole, from, to - from);
    }
}

bool EventLog::write_stop_note(const char* line, std::size_t len) {
    if (node_.fd() < 0 || stream_ == 0 || len > kStopNoteRoom || !failed_.load(std::memory_order_acquire) ||
        write_error_ == -ENOENT)
        return false;
    if (stop_note_written_.exchange(true, std::memory_order_acq_rel)) return false;
    if (!lock(true)) return false;
    // Every line below the first lost one was written, and each was written
    // only with kStopNoteRoom mapped after it: the note fits there.
    const std::uint64_t at = failed_end_.load(std::memory_order_acquire);
    const bool fits = at != ~std::uint64_t{0} && covered_by_mapping(at + len) &&
                      (next_.load(std::memory_order_acquire) & kFinished) == 0;
    if (fits) {
        copy_out(at, line, len);
        failed_end_.store(at + len, std::memory_order_release);  // finish() records the length after it
    }
    unlock();
    return fits;
}

void EventLog::finish(bool from_signal) {
    if (node_.fd() < 0 || stream_ == 0) return;
    still_recording();  // a removed file is said now, at the latest
    if (!lock(!from_signal)) return;
    const std::uint64_t old = next_.fetch_or(kFinished, std::memory_order_acq_rel);
    if ((old & kFinished) == 0) {
        std::uint64_t used = (old & kSealed) != 0 ? sealed_next_.load(std::memory_order_acquire) : old & ~kFlags;
        const std::uint64_t dropped = failed_end_.load(std::memory_order_acquire);
        if (dropped < used) used = dropped;
        set_stream_end(used, from_signal);
        if (same_file(node_.fd())) free_unused_tail(used);
    }
    unlock();
}

void EventLog::fail(long error, const char* what) {
    if (failed_.exchange(true, std::memory_order_acq_rel)) return;
    write_error_ = error;
    if (quiet_) return;
    char buf[512];
    TextBuffer msg(buf, sizeof buf);
    msg.add("stacksage: the event log ").add(node_.name()).add(" ").add(what).add(" (").add(
        strerrordesc_np(static_cast<int>(-error))).add("); later events of this process are not "
                                                        "recorded, the application runs on\n");
    tell_stderr_once(msg.c_str(), msg.size());
}

}  // namespace stacksage::preload
