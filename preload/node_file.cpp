#include "preload/node_file.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/raw_syscall.hpp"
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

namespace nf = formats::node_file;

void node_file_name(char* out, std::size_t cap, nf::FileKind kind, int n) {
    namespace layout = formats::run_layout;
    TextBuffer name(out, cap);
    name.add(layout::kNodeFilePrefix);
    if (n > 0) name.add(".").add_uint(static_cast<unsigned>(n));
    name.add(kind == nf::FileKind::events    ? layout::kNodeEventsSuffix
             : kind == nf::FileKind::samples ? layout::kNodeSamplesSuffix
                                             : layout::kNodeModelsSuffix);
}

namespace {

bool header_matches(const nf::NodeFileHeader& h, nf::FileKind kind) {
    return std::memcmp(h.magic, nf::kFileMagic, sizeof h.magic) == 0 && h.version == nf::kVersion &&
           h.header_bytes == nf::kNodeHeaderBytes && h.kind == static_cast<std::uint32_t>(kind);
}

}  // namespace

bool NodeFile::adopt(long fd, nf::FileKind kind) {
    struct stat st{};
    // A regular file holding our header, and nothing else: a planted FIFO was
    // opened non-blocking and is refused here, unread.
    if (raw::fstat(static_cast<int>(fd), &st) != 0 || !S_ISREG(st.st_mode) ||
        static_cast<std::uint64_t>(st.st_size) < nf::kNodeHeaderBytes)
        return false;
    nf::NodeFileHeader h{};
    if (raw::pread(static_cast<int>(fd), &h, sizeof h, 0) != static_cast<long>(sizeof h) || !header_matches(h, kind))
        return false;
    long addr = raw::mmap(nullptr, nf::kNodeHeaderBytes, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
    if (addr < 0 && addr > -4096) return false;
    fd_ = move_to_high_fd(static_cast<int>(fd));
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    header_ = reinterpret_cast<nf::NodeFileHeader*>(addr);
    return true;
}

long NodeFile::create_or_open(int dir, const char* name, nf::FileKind kind, const char* host) {
    constexpr int kOpen = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
    long fd = raw::openat(dir, name, kOpen);
    if (fd == -ENOENT) {
        // Written whole under a private name, then published: whoever finds
        // the file finds its header.
        char temporary[64];
        TextBuffer(temporary, sizeof temporary).add(".").add(name).add(".").add_uint(static_cast<unsigned>(raw::getpid())).add(".tmp");
        long tmp = raw::openat(dir, temporary, O_RDWR | O_CREAT | O_EXCL | kOpen, 0644);
        if (tmp < 0) return tmp;
        nf::NodeFileHeader h{};
        std::memcpy(h.magic, nf::kFileMagic, sizeof h.magic);
        h.version = nf::kVersion;
        h.header_bytes = nf::kNodeHeaderBytes;
        h.kind = static_cast<std::uint32_t>(kind);
        h.region_align = nf::kRegionAlign;
        h.next_region = nf::kNodeHeaderBytes;
        h.next_stream = 0;
        TextBuffer(h.host, sizeof h.host).add(host);
        char buf[nf::kNodeHeaderBytes] = {};
        std::memcpy(buf, &h, sizeof h);
        long rc = raw::pwrite(static_cast<int>(tmp), buf, sizeof buf, 0);
        if (rc == static_cast<long>(sizeof buf)) rc = raw::linkat(dir, temporary, dir, name);
        else if (rc >= 0) rc = -EIO;
        raw::unlinkat(dir, temporary, 0);
        if (rc == 0) {
            if (adopt(tmp, kind)) return 0;
            raw::close(static_cast<int>(tmp));
            return -EIO;
        }
        raw::close(static_cast<int>(tmp));
        if (rc != -EEXIST) return rc;
        fd = raw::openat(dir, name, kOpen);  // another process published it first
    }
    if (fd < 0) return fd;
    if (adopt(fd, kind)) return 0;
    raw::close(static_cast<int>(fd));
    return -EEXIST;  // something else has the name: the next one is tried
}

long NodeFile::open(int host_dir_fd, nf::FileKind kind, const char* host) {
    long first_error = 0;
    for (int n = 0; n < kMaxNames; ++n) {
        node_file_name(name_, sizeof name_, kind, n);
        const long rc = create_or_open(host_dir_fd, name_, kind, host);
        if (rc == 0) return 0;
        if (first_error == 0) first_error = rc;
        // Only a taken name is worth another: a full disk or a missing
        // directory fails the same way under every name.
        if (rc != -EEXIST && rc != -ELOOP && rc != -EISDIR && rc != -ENXIO && rc != -EACCES) break;
    }
    name_[0] = '\0';
    return first_error;
}

void NodeFile::close() {
    if (header_ != nullptr) raw::munmap(header_, nf::kNodeHeaderBytes);
    header_ = nullptr;
    if (fd_ >= 0) raw::close(fd_);
    fd_ = -1;
}

std::uint64_t NodeFile::reserve(std::uint64_t bytes) {
    return __atomic_fetch_add(&header_->next_region, bytes, __ATOMIC_RELAXED);
}

std::uint64_t NodeFile::new_stream() { return __atomic_add_fetch(&header_->next_stream, 1, __ATOMIC_RELAXED); }

bool NodeFile::same_file(int fd) const {
    struct stat st{};
    return fd >= 0 && raw::fstat(fd, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_;
}

bool NodeFile::removed() const {
    // Only our own file's count of names: the number may hold the
    // application's file by now (one it unlinked itself, say).
    struct stat st{};
    return fd_ >= 0 && raw::fstat(fd_, &st) == 0 && st.st_dev == dev_ && st.st_ino == ino_ && st.st_nlink == 0;
}

bool NodeFile::reopen(const char* dir_path) {
    if (dir_path == nullptr || name_[0] == '\0') return false;
    char path[4096 + 512];
    TextBuffer p(path, sizeof path);
    p.add(dir_path).add("/").add(name_);
    if (p.size() + 1 >= sizeof path) return false;
    // The directories on the way may have been replaced: look first without
    // opening anything (O_PATH: a FIFO or a device planted there is neither
    // opened nor woken), and open for writing only what is our very file.
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

namespace {

constexpr std::uint64_t kPage = 4096;


}  // namespace

nf::RegionHeader region_header(std::uint64_t bytes, std::uint64_t stream, std::uint32_t seq, std::int64_t pid,
                               std::int64_t rank, std::uint64_t of_stream) {
    nf::RegionHeader h{};
    std::memcpy(h.magic, nf::kRegionMagic, sizeof h.magic);
    h.version = nf::kVersion;
    h.header_bytes = sizeof(nf::RegionHeader);
    h.region_bytes = bytes;
    h.stream = stream;
    h.seq = seq;
    h.of_stream = static_cast<std::uint32_t>(of_stream);
    h.pid = pid;
    h.rank = rank;
    return h;
}

long write_whole_stream(NodeFile& file, std::int64_t pid, std::int64_t rank, std::uint64_t of_stream,
                        const char* data, std::size_t len) {
    if (!file.is_open()) return -EBADF;
    const std::uint64_t bytes = (sizeof(nf::RegionHeader) + len + kPage - 1) / kPage * kPage;
    const std::uint64_t at = file.reserve(bytes);
    nf::RegionHeader header = region_header(bytes, file.new_stream(), 0, pid, rank, of_stream);
    header.stream_end = nf::kStreamEnded | len;
    long rc;
    do {
        rc = raw::fallocate(file.fd(), 0, at, bytes);
    } while (rc == -EINTR);
    if (rc < 0 && rc != -EOPNOTSUPP && rc != -ENOSYS) return rc;
    // The data first, the header last: a reader never sees a header whose
    // data was not written.
    rc = raw::pwrite_all(file.fd(), data, len, at + sizeof header);
    if (rc >= 0) rc = raw::pwrite_all(file.fd(), reinterpret_cast<const char*>(&header), sizeof header, at);
    return rc < 0 ? rc : 0;
}

}  // namespace stacksage::preload
