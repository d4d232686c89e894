#include "parsers/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace stacksage {

namespace {

// "a FIFO (named pipe)", "a character device", ...: what a mode is, for a
// file that is not a regular one.
std::string_view kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// Where the symbolic link at path leads, when path is one: "" when it is
// not, or when its target is too long or holds bytes a message should not
// print (then only "a symbolic link" is said).
std::optional<std::string> link_target(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return std::nullopt;
    std::array<char, 256> buf{};
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= buf.size()) return std::string();
    std::string target(buf.data(), static_cast<std::size_t>(n));
    for (const char c : target)
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return std::string();
    return target;
}

InputProblem problem(InputProblem::Kind kind, std::string reason, int error_number = 0) {
    InputProblem p;
    p.kind = kind;
    p.reason = std::move(reason);
    p.error_number = error_number;
    return p;
}

// "it is a FIFO (named pipe), not a regular file", or for a link to one
// "it is a symbolic link to a FIFO (named pipe) (/tmp/p), not a regular file".
InputProblem not_regular(const std::string& path, mode_t mode) {
    const std::string_view kind = kind_of(mode);
    const bool directory = S_ISDIR(mode);
    const InputProblem::Kind problem_kind = directory ? InputProblem::Kind::Directory : InputProblem::Kind::NotRegular;
    const std::string tail = directory ? ", not a file" : ", not a regular file";
    if (const auto target = link_target(path)) {
        std::string out = "it is a symbolic link to ";
        out += kind;
        if (!target->empty()) out += " (" + *target + ")";
        InputProblem p = problem(problem_kind, out + tail);
        p.through_link = true;
        return p;
    }
    if (kind == "not a regular file") return problem(problem_kind, "it is not a regular file");
    return problem(problem_kind, "it is " + std::string(kind) + tail);
}

InputProblem too_large(std::uint64_t max_bytes, std::string_view what) {
    return problem(InputProblem::Kind::TooLarge,
                   "it is larger than " + describe_byte_count(max_bytes) + ", the most stacksage reads from " +
                       (what.empty() ? std::string("such a file") : std::string(what)));
}

}  // namespace

std::string describe_byte_count(std::uint64_t bytes) {
    using namespace input_limits;
    if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
    if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::string describe_errno(int error_number) { return std::strerror(error_number); }

InputFile& InputFile::operator=(InputFile&& other) noexcept {
    if (this != &other) {
        close();
        fd_ = other.fd_;
        size_ = other.size_;
        other.fd_ = -1;
    }
    return *this;
}

void InputFile::close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    size_ = 0;
}

std::optional<InputProblem> open_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what,
                                            InputFile& file) {
    file.close();
    // What the path leads to, before opening it: opening a device may act
    // (a tape rewinds, a watchdog arms), and opening a FIFO for reading
    // without O_NONBLOCK waits for a writer.
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0) {
        const int err = errno;
        if (err == ENOENT) {
            if (const auto target = link_target(path)) {
                InputProblem p = problem(InputProblem::Kind::Missing,
                                         "it is a symbolic link to a file that does not exist" +
                                             (target->empty() ? std::string() : " (" + *target + ")"),
                                         err);
                p.through_link = true;
                return p;
            }
            return problem(InputProblem::Kind::Missing, "no such file", err);
        }
        return problem(InputProblem::Kind::Unreadable, describe_errno(err), err);
    }
    if (!S_ISREG(info.st_mode)) return not_regular(path, info.st_mode);
    if (static_cast<std::uint64_t>(info.st_size) > max_bytes) return too_large(max_bytes, what);

    // O_NONBLOCK: should the path be swapped for a FIFO between the stat
    // above and this open, the open returns at once (and fstat refuses it).
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        const int err = errno;
        return problem(err == ENOENT ? InputProblem::Kind::Missing : InputProblem::Kind::Unreadable,
                       describe_errno(err), err);
    }
    struct stat opened {};
    if (::fstat(fd, &opened) != 0) {
        const int err = errno;
        ::close(fd);
        return problem(InputProblem::Kind::Unreadable, describe_errno(err), err);
    }
    if (!S_ISREG(opened.st_mode)) {
        ::close(fd);
        return not_regular(path, opened.st_mode);
    }
    if (static_cast<std::uint64_t>(opened.st_size) > max_bytes) {
        ::close(fd);
        return too_large(max_bytes, what);
    }
    file.fd_ = fd;
    file.size_ = static_cast<std::uint64_t>(opened.st_size);
    return std::nullopt;
}

namespace {

// Reads from file until its end or until `limit` (at least 1) bytes are in
// text; got: how many.
std::optional<InputProblem> read_into(const InputFile& file, std::uint64_t limit, std::string& text,
                                      std::uint64_t& got) {
    got = 0;
    // The file's size, one more byte so that reaching the end needs no
    // second read; a file still growing (or one of /proc, size 0) is read on
    // in larger blocks, never past limit.
    text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(file.size() + 1, limit)));
    for (;;) {
        if (got == text.size()) {
            if (got >= limit) break;
            const std::uint64_t grown = std::min<std::uint64_t>(text.size() * std::uint64_t{2} + 4096, limit);
            text.resize(static_cast<std::size_t>(grown));
        }
        const ssize_t n = ::read(file.fd(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            return problem(InputProblem::Kind::Unreadable, describe_errno(err), err);
        }
        if (n == 0) break;
        got += static_cast<std::uint64_t>(n);
    }
    text.resize(static_cast<std::size_t>(got));
    return std::nullopt;
}

}  // namespace

std::optional<InputProblem> read_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what,
                                            std::string& text) {
    InputFile file;
    if (auto p = open_input_file(path, max_bytes, what, file)) return p;
    // One byte over the limit tells a file that is too large from one that
    // is exactly as large as allowed (a file that grew since its fstat).
    std::uint64_t got = 0;
    if (auto p = read_into(file, max_bytes + 1, text, got)) return p;
    if (got > max_bytes) return too_large(max_bytes, what);
    return std::nullopt;
}

std::optional<InputProblem> read_input_prefix(const std::string& path, std::uint64_t max_bytes, std::string& text) {
    InputFile file;
    // The size does not matter here: only the first bytes are read.
    if (auto p = open_input_file(path, UINT64_MAX, {}, file)) return p;
    std::uint64_t got = 0;
    if (max_bytes == 0) {
        text.clear();
        return std::nullopt;
    }
    return read_into(file, max_bytes, text, got);
}

}  // namespace stacksage
