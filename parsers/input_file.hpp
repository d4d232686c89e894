// Opening and reading the files stacksage is given (a run directory's
// run.json, event logs, topologies and sampling summaries, an XML file named
// on the command line) without trusting them.
//
// A run directory may hold anything: a FIFO where a log should be (an
// open(2) or read(2) of it blocks forever), a symbolic link to /dev/zero (a
// "file" that never ends), a directory, a sparse file of terabytes. Every
// reader in parsers/ goes through this one helper, which
//  - looks at what the path leads to first (stat(2), following links) and
//    refuses anything but a regular file without opening it (opening some
//    devices has effects of its own), saying what it is, and for a symbolic
//    link where it leads;
//  - opens with O_NONBLOCK | O_NOCTTY, so that a FIFO swapped in between the
//    look and the open cannot block, and checks the opened descriptor again
//    (fstat: a regular file, the same one);
//  - caps what it reads: a documented limit per kind of file (below), checked
//    against the file's size before reading and against the bytes read while
//    reading (files in /proc report a size of 0 and hold text: their size is
//    never trusted to be the content's).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stacksage {

// The most bytes stacksage reads from each kind of input file; a larger file
// is refused with a note naming it (docs/analysis.md, "Broken inputs").
namespace input_limits {
inline constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
// run.json: a command line and a few fields (the recorder's is under 64 KiB).
inline constexpr std::uint64_t kRunJson = 16 * kMiB;
// One event log (<host>/*.jsonl): about 500 bytes per thread, so millions of
// threads fit.
inline constexpr std::uint64_t kEventLog = 4 * kGiB;
// An hwloc XML topology: the largest real ones (hundreds of cores with their
// PCI devices) are a few MiB.
inline constexpr std::uint64_t kTopologyXml = 256 * kMiB;
// A node's topology snapshot (topology.snap): smaller than its XML.
inline constexpr std::uint64_t kTopologySnapshot = 256 * kMiB;
// A sampling summary (<log stem>.samples.jsonl): aggregated per thread.
inline constexpr std::uint64_t kSampleSummary = 1 * kGiB;
// A raw sample file (<log stem>.samples.bin): 56 bytes per sample.
inline constexpr std::uint64_t kRawSampleFile = 64 * kGiB;
}  // namespace input_limits

// Why an input file cannot be read.
struct InputProblem {
    enum class Kind : std::uint8_t {
        Missing,     // nothing at the path (or a symbolic link to nothing)
        Directory,   // a directory
        NotRegular,  // a FIFO, a device, a socket
        TooLarge,    // over the limit for its kind
        Unreadable,  // open(2) or read(2) failed (permissions, I/O errors)
    };
    Kind kind = Kind::Unreadable;
    int error_number = 0;  // errno, for Missing and Unreadable
    bool through_link = false;  // the path is a symbolic link (the reason says where it leads)
    // What happened, as a clause that completes "<file>: ": "it is a FIFO
    // (named pipe), not a regular file", "it is a symbolic link to a
    // character device (/dev/zero), not a regular file", "it is larger than
    // 4 GiB, the most stacksage reads from an event log", "Permission denied".
    std::string reason;
};

// A regular file opened for reading; closed with the object.
class InputFile {
public:
    InputFile() = default;
    InputFile(InputFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
    InputFile& operator=(InputFile&& other) noexcept;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    ~InputFile() { close(); }

    int fd() const { return fd_; }
    bool is_open() const { return fd_ >= 0; }
    // The size fstat(2) gave: 0 for files of /proc and /sys whatever they hold.
    std::uint64_t size() const { return size_; }
    void close();

private:
    friend std::optional<InputProblem> open_input_file(const std::string&, std::uint64_t, std::string_view,
                                                       InputFile&);
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

// Opens the regular file at path for reading.
//
// max_bytes: the limit for this kind of file (input_limits); a file whose
// size is over it is refused. what: the kind of file, as messages end
// "the most stacksage reads from <what>" ("an event log").
//
// \return nullopt, with `file` open.
// \return the problem otherwise (file is left closed).
std::optional<InputProblem> open_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what,
                                            InputFile& file);

// Reads the whole regular file at path into `text` (its previous contents are
// replaced; its capacity is reused), at most max_bytes.
//
// \return nullopt on success (text may be empty: the file was empty).
// \return the problem otherwise; text is then unspecified.
std::optional<InputProblem> read_input_file(const std::string& path, std::uint64_t max_bytes, std::string_view what,
                                            std::string& text);

// Reads at most max_bytes from the start of the regular file at path (a file
// holding more is not an error: what follows is left unread).
std::optional<InputProblem> read_input_prefix(const std::string& path, std::uint64_t max_bytes, std::string& text);

// "4 GiB", "256 MiB", "12345 bytes": a limit as messages print it.
std::string describe_byte_count(std::uint64_t bytes);

// What an errno means when opening a directory or a file, as messages say it
// ("Permission denied"): strerror, kept here so that every reader says the same.
std::string describe_errno(int error_number);

}  // namespace stacksage
