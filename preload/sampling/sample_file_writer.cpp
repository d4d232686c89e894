#include "preload/sampling/sample_file_writer.hpp"

#include <errno.h>
#include <unistd.h>

namespace stacksage::sampling {

namespace {
bool write_all(int fd, const void* data, std::size_t len) {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
        const ssize_t n = ::write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        p += n;
        len -= static_cast<std::size_t>(n);
    }
    return true;
}
}  // namespace

bool SampleFileWriter::open(int fd, void* buffer, std::size_t buffer_bytes, const SampleFileHeader& header) {
    if (fd < 0 || buffer_bytes < sizeof(SampleBlockHeader) + sizeof(SampleFileRecord)) return false;
    const int saved = errno;
    if (!write_all(fd, &header, sizeof header)) {
        ::close(fd);
        errno = saved;
        return false;
    }
    errno = saved;
    fd_ = fd;
    file_ = preload::FileIdentity::of(fd);
    block_ = static_cast<SampleBlockHeader*>(buffer);
    records_ = reinterpret_cast<SampleFileRecord*>(block_ + 1);
    capacity_ = static_cast<std::uint32_t>((buffer_bytes - sizeof(SampleBlockHeader)) / sizeof(SampleFileRecord));
    count_ = 0;
    return true;
}

bool SampleFileWriter::flush() {
    if (fd_ < 0 || count_ == 0) return fd_ >= 0;
    block_->magic = kSampleBlockMagic;
    block_->record_count = count_;
    block_->sequence = sequence_;
    const int saved = errno;  // never disturb the application's errno
    const bool ours = file_.held_by(fd_);
    const bool ok = ours && write_all(fd_, block_, sizeof(SampleBlockHeader) + count_ * sizeof(SampleFileRecord));
    if (!ok) {
        ++errors_;
        if (ours) ::close(fd_);
        fd_ = -1;
        errno = saved;
        return false;
    }
    errno = saved;
    ++sequence_;
    written_ += count_;
    count_ = 0;
    return true;
}

bool SampleFileWriter::close() {
    const bool ok = flush();
    if (fd_ >= 0) {
        const int saved = errno;
        if (file_.held_by(fd_)) ::close(fd_);
        errno = saved;
        fd_ = -1;
    }
    return ok;
}

}  // namespace stacksage::sampling
