#include "parsers/sample_file_reader.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace stacksage {

Result<RawSampleFile> read_raw_sample_file(const std::string& path) {
    using namespace sampling;
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path + ": cannot be read");
    RawSampleFile out;
    // The file's size bounds what a block may claim (below).
    in.seekg(0, std::ios::end);
    const auto size = static_cast<std::uint64_t>(std::max<std::streamoff>(in.tellg(), 0));
    in.seekg(0);
    // Read the fixed part of the header; a newer header may be longer.
    in.read(reinterpret_cast<char*>(&out.header), sizeof out.header);
    if (in.gcount() < static_cast<std::streamsize>(sizeof out.header) ||
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
    in.seekg(out.header.header_bytes);
    SampleBlockHeader block{};
    while (true) {
        in.read(reinterpret_cast<char*>(&block), sizeof block);
        if (in.gcount() == 0) break;
        if (in.gcount() < static_cast<std::streamsize>(sizeof block)) {
            out.partial_block = true;
            break;
        }
        if (block.magic != kSampleBlockMagic || block.sequence != out.blocks)
            return make_error(path + ": block " + std::to_string(out.blocks) + " is damaged (bad block header)");
        // A block is cut short only by the end of the file (a killed writer):
        // never make room for more records than the rest of the file holds,
        // whatever a damaged count says (up to 4 billion records, 224 GiB).
        const auto at = static_cast<std::uint64_t>(std::max<std::streamoff>(in.tellg(), 0));
        const std::uint64_t fit = (size > at ? size - at : 0) / sizeof(SampleFileRecord);
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(block.record_count, fit));
        const std::size_t old = out.records.size();
        out.records.resize(old + count);
        const auto want = static_cast<std::streamsize>(count * sizeof(SampleFileRecord));
        in.read(reinterpret_cast<char*>(out.records.data() + old), want);
        if (count < block.record_count || in.gcount() < want) {
            out.records.resize(old + static_cast<std::size_t>(in.gcount()) / sizeof(SampleFileRecord));
            out.partial_block = true;
            break;
        }
        ++out.blocks;
    }
    return out;
}

}  // namespace stacksage
