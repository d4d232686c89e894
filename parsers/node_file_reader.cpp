#include "parsers/node_file_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "parsers/input_file.hpp"

namespace stacksage {

namespace nf = formats::node_file;

namespace {

Error bad_file(const std::string& label, const std::string& why) {
    return make_error(label + ": " + why + "; the file is skipped");
}

bool region_header_at(const std::string& bytes, std::uint64_t at, nf::RegionHeader& h) {
    if (at + sizeof h > bytes.size()) return false;
    std::memcpy(&h, bytes.data() + at, sizeof h);
    return std::memcmp(h.magic, nf::kRegionMagic, sizeof h.magic) == 0 && h.header_bytes >= sizeof h &&
           h.region_bytes > h.header_bytes && h.region_bytes % nf::kRegionAlign == 0 &&
           h.region_bytes <= nf::kMaxRegionBytes && h.stream != 0;
}

struct Piece {
    std::uint32_t seq;
    std::uint64_t data_at;
    std::uint64_t data_len;  // what the file holds of it
};

}  // namespace

Result<NodeFile> parse_node_file(std::string bytes, const std::string& label, nf::FileKind kind) {
    NodeFile file;
    file.kind = kind;
    file.bytes = std::move(bytes);
    const std::string& b = file.bytes;
    nf::NodeFileHeader header{};
    if (b.size() < sizeof header) return bad_file(label, "not a stacksage node file (" + std::to_string(b.size()) + " bytes, shorter than its header)");
    std::memcpy(&header, b.data(), sizeof header);
    if (std::memcmp(header.magic, nf::kFileMagic, sizeof header.magic) != 0)
        return bad_file(label, "not a stacksage node file (no node-file header)");
    if (header.version != nf::kVersion)
        return bad_file(label, "node file version " + std::to_string(header.version) + " (this stacksage reads " +
                                   std::to_string(nf::kVersion) + "); read it with a newer stacksage");
    if (header.kind != static_cast<std::uint32_t>(kind))
        return bad_file(label, "a node file of another kind (" + std::to_string(header.kind) + ")");
    if (header.header_bytes < sizeof header || header.header_bytes % nf::kRegionAlign != 0)
        return bad_file(label, "its header size (" + std::to_string(header.header_bytes) + ") is damaged");
    file.host.assign(header.host, strnlen(header.host, sizeof header.host));

    struct Building {
        NodeStream info;
        std::vector<Piece> pieces;
        std::uint64_t end = 0;  // the recorded length, when ended
    };
    std::map<std::uint64_t, Building> by_stream;
    std::uint64_t at = header.header_bytes;
    bool in_damage = false;
    while (at < b.size()) {
        nf::RegionHeader h{};
        if (!region_header_at(b, at, h)) {
            // Zeros (a process killed right after reserving) or damage: the
            // next region starts at some later boundary.
            if (!in_damage) ++file.damaged_regions;
            in_damage = true;
            at += nf::kRegionAlign;
            continue;
        }
        in_damage = false;
        Building& s = by_stream[h.stream];
        if (s.pieces.empty()) {
            s.info.stream = h.stream;
            s.info.pid = h.pid;
            s.info.rank = h.rank;
            s.info.of_stream = h.of_stream;
        }
        if (h.seq == 0 && (h.stream_end & nf::kStreamEnded) != 0) {
            s.info.ended = true;
            s.end = h.stream_end & ~nf::kStreamEnded;
        }
        // A header that claims more than the file holds keeps what is there
        // (nothing, when its data would start past the end).
        const std::uint64_t data_at = std::min<std::uint64_t>(at + h.header_bytes, b.size());
        const std::uint64_t data_len = std::min<std::uint64_t>(h.region_bytes - h.header_bytes, b.size() - data_at);
        s.pieces.push_back({h.seq, data_at, data_len});
        at += h.region_bytes;
    }
    file.streams.reserve(by_stream.size());
    for (auto& [number, s] : by_stream) {
        std::sort(s.pieces.begin(), s.pieces.end(), [](const Piece& x, const Piece& y) { return x.seq < y.seq; });
        NodeStream info = s.info;
        info.regions = s.pieces.size();
        const std::uint64_t limit = info.ended ? s.end : ~std::uint64_t{0};
        if (s.pieces.size() == 1 && s.pieces[0].seq == 0) {
            info.text = std::string_view(b).substr(s.pieces[0].data_at, std::min(s.pieces[0].data_len, limit));
        } else {
            std::string& text = file.joined.emplace_back();
            std::uint32_t expected = 0;
            for (const Piece& p : s.pieces) {
                if (p.seq != expected) {
                    info.missing_regions += p.seq > expected ? p.seq - expected : 0;
                    text.push_back('\0');  // the lines on either side are torn, never glued
                }
                if (p.seq < expected) continue;  // a region twice: damage
                expected = p.seq + 1;
                text.append(b, p.data_at, p.data_len);
            }
            if (text.size() > limit) text.resize(limit);
            info.text = text;
        }
        file.streams.push_back(info);
    }
    return file;
}

Result<std::string> read_node_stream(const std::string& path, const std::string& label, std::uint64_t stream,
                                     const std::uint64_t* offsets, std::size_t count) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return make_error(label + ": cannot be read: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(label + ": not a regular file");
    }
    std::string text;
    std::uint64_t end = ~std::uint64_t{0};
    for (std::size_t i = 0; i < count; ++i) {
        nf::RegionHeader h{};
        const bool header_read = ::pread(fd, &h, sizeof h, static_cast<off_t>(offsets[i])) == static_cast<ssize_t>(sizeof h);
        if (!header_read || std::memcmp(h.magic, nf::kRegionMagic, sizeof h.magic) != 0 || h.stream != stream ||
            h.seq != i || h.header_bytes < sizeof h || h.region_bytes <= h.header_bytes ||
            h.region_bytes > nf::kMaxRegionBytes) {
            ::close(fd);
            return make_error(label + ": region " + std::to_string(i) + " of stream " + std::to_string(stream) +
                              " is not where its writer put it");
        }
        if (i == 0 && (h.stream_end & nf::kStreamEnded) != 0) end = h.stream_end & ~nf::kStreamEnded;
        // No more than the file holds there: a damaged header may claim up to
        // kMaxRegionBytes.
        const std::uint64_t data_at = offsets[i] + h.header_bytes;
        const std::uint64_t held = static_cast<std::uint64_t>(st.st_size) > data_at ? st.st_size - data_at : 0;
        const std::size_t at = text.size(), want = std::min<std::uint64_t>(h.region_bytes - h.header_bytes, held);
        text.resize(at + want);
        const ssize_t n = ::pread(fd, text.data() + at, want, static_cast<off_t>(offsets[i] + h.header_bytes));
        text.resize(at + (n > 0 ? static_cast<std::size_t>(n) : 0));
    }
    ::close(fd);
    if (text.size() > end) text.resize(end);
    return text;
}

Result<NodeFile> read_node_file(const std::string& path, const std::string& label, nf::FileKind kind) {
    std::string bytes;
    if (auto problem = read_input_file(path, input_limits::kEventLog, "a node file", bytes))
        return bad_file(label, "cannot be read: " + problem->reason);
    return parse_node_file(std::move(bytes), label, kind);
}

}  // namespace stacksage
