// Writing node files (core/formats/node_file_format.hpp) as the recorder
// leaves them, for tests and the synthetic runs: each stream in one region
// just large enough (or split into regions of a given size, to exercise
// chains), its end recorded unless the process is to look killed.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "core/formats/node_file_format.hpp"

namespace stacksage::testing {

class NodeFileWriter {
public:
    explicit NodeFileWriter(const std::string& host,
                            formats::node_file::FileKind kind = formats::node_file::FileKind::events) {
        namespace nf = formats::node_file;
        bytes_.assign(nf::kNodeHeaderBytes, '\0');
        nf::NodeFileHeader h{};
        std::memcpy(h.magic, nf::kFileMagic, sizeof h.magic);
        h.version = nf::kVersion;
        h.header_bytes = nf::kNodeHeaderBytes;
        h.kind = static_cast<std::uint32_t>(kind);
        h.region_align = nf::kRegionAlign;
        std::memcpy(h.host, host.data(), std::min(host.size(), sizeof h.host - 1));
        std::memcpy(bytes_.data(), &h, sizeof h);
    }

    // Appends a stream holding `text`; region_data > 0 splits it into
    // regions of that many data bytes (rounded up to the alignment). ended:
    // its length is recorded (false: as a killed process leaves it).
    // \return its stream number.
    std::uint64_t add_stream(std::string_view text, std::int64_t pid, std::int64_t rank, bool ended = true,
                             std::uint64_t of_stream = 0, std::uint64_t region_data = 0) {
        namespace nf = formats::node_file;
        const std::uint64_t stream = ++streams_;
        std::uint64_t done = 0;
        std::uint32_t seq = 0;
        do {
            const std::uint64_t n = region_data > 0 ? std::min<std::uint64_t>(region_data, text.size() - done)
                                                    : text.size() - done;
            const std::uint64_t data = region_data > 0 ? region_data : n;
            const std::uint64_t bytes = (sizeof(nf::RegionHeader) + data + nf::kRegionAlign - 1) /
                                        nf::kRegionAlign * nf::kRegionAlign;
            nf::RegionHeader h{};
            std::memcpy(h.magic, nf::kRegionMagic, sizeof h.magic);
            h.version = nf::kVersion;
            h.header_bytes = sizeof h;
            h.region_bytes = bytes;
            h.stream = stream;
            h.seq = seq++;
            h.of_stream = static_cast<std::uint32_t>(of_stream);
            h.pid = pid;
            h.rank = rank;
            if (h.seq == 0 && ended) h.stream_end = nf::kStreamEnded | text.size();
            const std::size_t at = bytes_.size();
            bytes_.resize(at + bytes, '\0');
            std::memcpy(bytes_.data() + at, &h, sizeof h);
            std::memcpy(bytes_.data() + at + sizeof h, text.data() + done, n);
            done += n;
        } while (done < text.size());
        return stream;
    }

    // What a process killed between reserving a region and writing its
    // header leaves: `bytes` of zeros.
    void add_zeros(std::uint64_t bytes) { bytes_.append(bytes, '\0'); }

    const std::string& bytes() const { return bytes_; }
    std::string& bytes() { return bytes_; }

private:
    std::string bytes_;
    std::uint64_t streams_ = 0;
};

}  // namespace stacksage::testing
