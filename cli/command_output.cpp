#include "cli/command_output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cli/commands.hpp"
#include "reports/terminal_text.hpp"

namespace stacksage::cli {

namespace {

bool g_closed_at_start[3] = {false, false, false};

// Gathers a producer's pieces into large writes to fd.
// \return 0, or the errno of the first failed write.
int write_produced(int fd, const CommandOutput::Producer& produce, std::size_t* bytes) {
    constexpr std::size_t kChunk = 1 << 20;
    std::string buffer;
    buffer.reserve(kChunk);
    int error = 0;
    std::size_t total = 0;
    produce([&](std::string_view piece) {
        total += piece.size();
        if (error != 0) return;
        if (buffer.size() + piece.size() > kChunk) {
            error = write_all(fd, buffer);
            buffer.clear();
            if (error != 0) return;
        }
        if (piece.size() >= kChunk) error = write_all(fd, piece);
        else buffer.append(piece);
    });
    if (error == 0) error = write_all(fd, buffer);
    if (bytes) *bytes = total;
    return error;
}

}  // namespace

int write_all(int fd, std::string_view data) {
    if (fd >= 0 && fd <= 2 && g_closed_at_start[fd]) return EBADF;
    const char* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno;
        if (n == 0) return EIO;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return 0;
}

void hold_standard_descriptors() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // The lowest free descriptor: fd itself, as those below it are open.
        const int held = ::open("/dev/null", (fd == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (held >= 0 && held != fd) ::close(held);  // cannot happen; do not leak it if it does
        g_closed_at_start[fd] = true;
    }
}

bool standard_descriptor_was_closed(int fd) { return fd >= 0 && fd <= 2 && g_closed_at_start[fd]; }

bool CommandOutput::print(std::string_view text) {
    const int error = write_all(STDOUT_FILENO, text);
    if (error != 0 && stdout_error_ == 0) stdout_error_ = error;
    return error == 0;
}

bool CommandOutput::say(std::string_view message) {
    const std::string line = prefix_ + ": " + terminal_safe_lines(message) + "\n";
    const bool ok = write_all(STDERR_FILENO, line) == 0;
    if (!ok) stderr_failed_ = true;
    return ok;
}

bool CommandOutput::print_from(const Producer& produce, std::size_t* bytes) {
    const int error = write_produced(STDOUT_FILENO, produce, bytes);
    if (error != 0 && stdout_error_ == 0) stdout_error_ = error;
    return error == 0;
}

bool CommandOutput::write_file(const std::string& path, std::string_view content) {
    return write_file_from(path, [content](const auto& sink) { sink(content); });
}

bool CommandOutput::write_file_from(const std::string& path, const Producer& produce, std::size_t* bytes) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
    int error = fd < 0 ? errno : write_produced(fd, produce, bytes);
    // close() reports what a network file system could not store.
    if (fd >= 0 && ::close(fd) != 0 && error == 0) error = errno;
    if (error == 0) return true;
    file_failed_ = true;
    struct stat st {};
    if (fd < 0 && error == ELOOP && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
        say("'" + path + "' is a symbolic link; stacksage does not write through links: remove it or choose another "
            "file");
    else
        say("cannot write '" + path + "': " + std::strerror(error) + "; check the path, its permissions and the free space");
    return false;
}

int CommandOutput::finish(int status) {
    if (stdout_error_ != 0)
        say(std::string("cannot write to standard output: ") + std::strerror(stdout_error_));
    return failed() ? kExitUsage : status;
}

}  // namespace stacksage::cli
