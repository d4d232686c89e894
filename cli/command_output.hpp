// Everything a subcommand writes, on its standard output, its standard error
// or into files, goes through here, so that no failed write is lost or fatal:
// a full disk, a closed descriptor or a planted symbolic link becomes a
// message and exit status 2 (docs/RELIABILITY.md, "Outputs and exit status").
// Nothing here throws or aborts: the writes are write(2) calls whose errors
// are kept.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace stacksage::cli {

// Makes sure descriptors 0, 1 and 2 are open before the command opens any
// file, so that a file never takes the place of a standard stream closed by
// the caller (`2>&-`) and gets the command's messages. A closed one is put on
// /dev/null, close-on-exec (the command `stacksage run` starts still finds it
// closed), and remembered: writing to it counts as a failed write.
// Call once, first thing in main().
void hold_standard_descriptors();

// \return true when descriptor fd (0, 1 or 2) was closed when the program started.
bool standard_descriptor_was_closed(int fd);

// Writes all of data to fd, retrying short writes and EINTR.
// \return 0, or the errno of the failure (EBADF for a standard descriptor
//         that was closed when the program started).
int write_all(int fd, std::string_view data);

class CommandOutput {
public:
    // prefix: what starts each message ("stacksage report").
    explicit CommandOutput(std::string prefix) : prefix_(std::move(prefix)) {}

    // Writes text, as it is, on standard output.
    // \return false when it could not be written all (remembered for finish()).
    bool print(std::string_view text);

    // Writes "<prefix>: <message>\n" on standard error, with the control
    // characters of message shown as escapes (reports/terminal_text.hpp).
    // \return false when it could not be written (remembered for finish()).
    bool say(std::string_view message);

    // Writes content into the file at path, created (0666 less the umask) or
    // truncated. A symbolic link at path is refused, not followed: a link
    // planted in a shared directory must not turn the write into one of
    // another file. On failure, says why, naming the file.
    // \return true when the whole content was written and the file closed.
    bool write_file(const std::string& path, std::string_view content);

    // What a streamed output is given: it writes its text in pieces
    // through the sink (a report of a million ranks never whole in memory).
    using Producer = std::function<void(const std::function<void(std::string_view)>& sink)>;

    // print and write_file for a streamed output: the pieces are gathered
    // into writes of a MiB; after a failed write the rest is dropped.
    // bytes (optional): how many bytes the producer gave.
    bool print_from(const Producer& produce, std::size_t* bytes = nullptr);
    bool write_file_from(const std::string& path, const Producer& produce, std::size_t* bytes = nullptr);

    // \return true when some write failed so far.
    bool failed() const { return stdout_error_ != 0 || stderr_failed_ || file_failed_; }

    // Ends the command's output: says that standard output could not be
    // written, when so (on standard error, if that still can be).
    // \return status, or 2 (kExitUsage) when some write failed.
    int finish(int status);

private:
    std::string prefix_;
    int stdout_error_ = 0;  // errno of the first failed write on standard output
    bool stderr_failed_ = false;
    bool file_failed_ = false;
};

}  // namespace stacksage::cli
