#include "parsers/sample_file_reader.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "parsers/input_file.hpp"

namespace stacksage {

namespace {

// Reads up to n bytes at offset `at` of fd (fewer only at the end of the
// file, or on an error); advances at.
std::size_t read_at(int fd, void* buffer, std::size_t n, std::uint64_t& at) {
    std::size_t got = 0;
    while (got < n) {
        const ssize_t r = ::pread(fd, static_cast<char*>(buffer) + got, n - got, static_cast<off_t>(at + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<std::size_t>(r);
    }
    at += got;
    return got;
}

}  // namespace

Result<RawSampleFile> read_raw_sample_file(const std::string& path) {
    using namespace sampling;
    InputFile file;
    if (auto problem = open_input_file(path, input_limits::kRawSampleFile, "a raw sample file", file))
        return make_error(path + ": cannot be read: " + problem->reason);
    RawSampleFile out;
    // The file's size bounds what a block may claim (below).
    const std::uint64_t size = file.size();
    std::uint64_t at = 0;
    // Read the fixed part of the header; a newer header may be longer.
    if (read_at(file.fd(), &out.header, sizeof out.header, at) < sizeof out.header ||
        std::memcmp(out.header.magic, kSampleFileMagic, sizeof kSampleFileMagic) != 0)
        return make_error(path + ": not a stacksage sample file (bad magic)");
    if (out.header.version > kSampleFileVersion)
        return make_error(path + ": sample file version " + std::to_string(out.header.version) +
                          " is newer than this stacksage reads (" + std::to_string(kSampleFileVersion) +
                          "): update stacksage");
    if (out.header.record_bytes != sizeof(SampleFileRecord))
        return make_error(path + ": records of " + std::to_string(out.header.record_bytes) + " bytes, expected " +
                          std::to_string(sizeof(SampleFileRecord)));
    if (out.header.header_bytes < sizeof out.header)
        return make_error(path + ": header of " + std::to_string(out.header.header_bytes) + " bytes is too short");
    at = out.header.header_bytes;
    SampleBlockHeader block{};
    while (true) {
        const std::size_t got = read_at(file.fd(), &block, sizeof block, at);
        if (got == 0) break;
        if (got < sizeof block) {
            out.partial_block = true;
            break;
        }
        if (block.magic != kSampleBlockMagic || block.sequence != out.blocks)
            return make_error(path + ": block " + std::to_string(out.blocks) + " is damaged (bad block header)");
        // A block is cut short only by the end of the file (a killed writer):
        // never make room for more records than the rest of the file holds,
        // whatever a damaged count says (up to 4 billion records, 224 GiB).
        const std::uint64_t fit = (size > at ? size - at : 0) / sizeof(SampleFileRecord);
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(block.record_count, fit));
        const std::size_t old = out.records.size();
        out.records.resize(old + count);
        const std::size_t want = count * sizeof(SampleFileRecord);
        const std::size_t records_got = read_at(file.fd(), out.records.data() + old, want, at);
        if (count < block.record_count || records_got < want) {
            out.records.resize(old + records_got / sizeof(SampleFileRecord));
            out.partial_block = true;
            break;
        }
        ++out.blocks;
    }
    return out;
}

}  // namespace stacksage
