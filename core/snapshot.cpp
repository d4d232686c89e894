#include "core/snapshot.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace stacksage {

namespace {

constexpr char kMagic[8] = {'S', 'T', 'K', 'S', 'N', 'A', 'P', '\x1a'};
constexpr std::uint32_t kByteOrderMark = 0x01020304u;
constexpr std::size_t kAlign = 64;

struct ImageHeader {
    char magic[8];
    std::uint32_t version;
    std::uint32_t byte_order;
    std::uint32_t header_bytes;   // sizeof(ImageHeader) + the section table
    std::uint32_t section_count;
    std::uint32_t record_sizes[4];  // component, datapath, type head, attribute
    std::uint64_t file_bytes;
    std::uint64_t checksum;       // of bytes [header_bytes, file_bytes)
    std::uint64_t live_components;
    std::uint64_t live_datapaths;
    std::uint64_t reserved[3];
};
static_assert(sizeof(ImageHeader) == 96);

struct Section {
    std::uint32_t id;
    std::uint32_t element_bytes;
    std::uint64_t offset;
    std::uint64_t count;
};

// The arrays of a model, in image order.
enum SectionId : std::uint32_t {
    kComponents, kDataPaths, kTypeHeads, kAttrs, kChars, kCpusetWords, kFreeAttrs,
    kWordsOffsets, kWordsBlob, kKeysOffsets, kKeysBlob, kUserOffsets, kUserBlob,
    kByType0,  // kByType0 + type, one per component type
    kSectionCount = kByType0 + kComponentTypeCount,
};

// Eight independent add-multiply lanes over 8-byte words: verifying a
// topology image costs a few microseconds, and any changed word changes its
// lane (multiplying by an odd constant is a bijection); lanes are mixed at the end.
std::uint64_t checksum(const unsigned char* p, std::size_t n) {
    constexpr std::uint64_t k = 0x9E3779B97F4A7C15ull;
    std::uint64_t lane[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64)
        for (int l = 0; l < 8; ++l) {
            std::uint64_t w;
            std::memcpy(&w, p + i + 8 * l, 8);
            lane[l] = (lane[l] + w) * k;
        }
    std::uint64_t h = n;
    for (; i < n; ++i) h = (h ^ p[i]) * k;
    for (auto l : lane) {
        h = (h ^ l ^ (l >> 29)) * k;
        h ^= h >> 31;
    }
    return h;
}

std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

// Reads and sets the Model's private arrays (Model names it a friend).
struct SnapshotAccess {
    struct Span {
        const void* data;
        std::size_t count, element_bytes;
    };

    template <class T> static Span span(const PodArray<T>& a) { return {a.data(), a.size(), sizeof(T)}; }

    static std::array<Span, kSectionCount> sections(const Model& m) {
        std::array<Span, kSectionCount> s{};
        s[kComponents] = span(m.components_);
        s[kDataPaths] = span(m.datapaths_);
        s[kTypeHeads] = span(m.type_heads_);
        s[kAttrs] = span(m.attrs_);
        s[kChars] = span(m.chars_);
        s[kCpusetWords] = span(m.cpuset_words_);
        s[kFreeAttrs] = span(m.free_attrs_);
        s[kWordsOffsets] = span(m.words_.offsets);
        s[kWordsBlob] = span(m.words_.blob);
        s[kKeysOffsets] = span(m.keys_.offsets);
        s[kKeysBlob] = span(m.keys_.blob);
        s[kUserOffsets] = span(m.user_types_.offsets);
        s[kUserBlob] = span(m.user_types_.blob);
        for (int t = 0; t < kComponentTypeCount; ++t) s[kByType0 + t] = span(m.by_type_[t]);
        return s;
    }

    static std::array<std::uint32_t, 4> record_sizes() {
        return {sizeof(Model::ComponentRecord), sizeof(Model::DataPathRecord), sizeof(Model::TypeHead),
                sizeof(Model::AttrEntry)};
    }

    static std::uint64_t live_components(const Model& m) { return m.live_components_; }
    static std::uint64_t live_datapaths(const Model& m) { return m.live_datapaths_; }

    template <class T>
    static void borrow(PodArray<T>& a, const unsigned char* base, const Section& s) {
        a.borrow(reinterpret_cast<const T*>(base + s.offset), s.count);
    }

    // Points a model's arrays into a verified image.
    static Model adopt(const unsigned char* base, const Section* sec, const ImageHeader& h,
                       std::shared_ptr<const void> mapping) {
        Model m;
        borrow(m.components_, base, sec[kComponents]);
        borrow(m.datapaths_, base, sec[kDataPaths]);
        borrow(m.type_heads_, base, sec[kTypeHeads]);
        borrow(m.attrs_, base, sec[kAttrs]);
        borrow(m.chars_, base, sec[kChars]);
        borrow(m.cpuset_words_, base, sec[kCpusetWords]);
        borrow(m.free_attrs_, base, sec[kFreeAttrs]);
        borrow(m.words_.offsets, base, sec[kWordsOffsets]);
        borrow(m.words_.blob, base, sec[kWordsBlob]);
        borrow(m.keys_.offsets, base, sec[kKeysOffsets]);
        borrow(m.keys_.blob, base, sec[kKeysBlob]);
        borrow(m.user_types_.offsets, base, sec[kUserOffsets]);
        borrow(m.user_types_.blob, base, sec[kUserBlob]);
        m.words_.forget_lookups();
        m.keys_.forget_lookups();
        m.user_types_.forget_lookups();
        for (int t = 0; t < kComponentTypeCount; ++t) borrow(m.by_type_[t], base, sec[kByType0 + t]);
        m.live_components_ = h.live_components;
        m.live_datapaths_ = h.live_datapaths;
        m.mapping_ = std::move(mapping);
        m.borrowed_ = true;
        return m;
    }

    // Every linked list ends, and no element is on two lists: otherwise a
    // query on a crafted image would loop forever. One pass, marking.
    static std::string validate_lists(const Model& m) {
        constexpr std::uint32_t nil = Model::kNil;
        const auto nc = m.components_.size();
        std::vector<std::uint8_t> seen_child(nc, 0), seen_attr(m.attrs_.size(), 0),
            seen_head(m.type_heads_.size(), 0), seen_out(m.datapaths_.size(), 0), seen_in(m.datapaths_.size(), 0);
        auto walk_attrs = [&](std::uint32_t a) {
            for (; a != nil; a = m.attrs_[a].next) {
                if (seen_attr[a]) return false;
                seen_attr[a] = 1;
            }
            return true;
        };
        for (std::uint32_t i = 0; i < nc; ++i) {
            const auto& r = m.components_[i];
            if (!r.alive) continue;
            for (auto c = r.first_child; c != nil; c = m.components_[c].next_sibling) {
                if (seen_child[c] || m.components_[c].parent != i)
                    return fmt::format("component {}: child list is cyclic or shared", i);
                seen_child[c] = 1;
            }
            if (!walk_attrs(r.first_attr)) return fmt::format("component {}: attribute list is cyclic or shared", i);
            for (auto h = r.first_type_head; h != nil; h = m.type_heads_[h].next) {
                if (seen_head[h]) return fmt::format("component {}: DataPath lists are cyclic or shared", i);
                seen_head[h] = 1;
                for (auto d = m.type_heads_[h].out_head; d != nil; d = m.datapaths_[d].next_out) {
                    if (seen_out[d]) return fmt::format("component {}: DataPath list is cyclic", i);
                    seen_out[d] = 1;
                }
                for (auto d = m.type_heads_[h].in_head; d != nil; d = m.datapaths_[d].next_in) {
                    if (seen_in[d]) return fmt::format("component {}: DataPath list is cyclic", i);
                    seen_in[d] = 1;
                }
            }
        }
        for (std::uint32_t d = 0; d < m.datapaths_.size(); ++d)
            if (m.datapaths_[d].alive && !walk_attrs(m.datapaths_[d].first_attr))
                return fmt::format("datapath {}: attribute list is cyclic or shared", d);
        // Parent chains end (depth() and ancestor queries walk them). Colour
        // each chain once: 1 = on the chain being walked, 2 = known to end.
        std::vector<std::uint8_t> state(nc, 0);
        std::vector<std::uint32_t> chain;
        for (std::uint32_t i = 0; i < nc; ++i) {
            chain.clear();
            auto p = i;
            while (p != nil && state[p] == 0) {
                state[p] = 1;
                chain.push_back(p);
                p = m.components_[p].parent;
            }
            if (p != nil && state[p] == 1) return fmt::format("component {}: parent links form a cycle", p);
            for (auto c : chain) state[c] = 2;
        }
        return {};
    }

    // Every index inside the image points inside it, so that queries on a
    // crafted or damaged image cannot read out of bounds. Returns "" or the
    // first problem found.
    static std::string validate(const Model& m) {
        constexpr std::uint32_t nil = Model::kNil;
        const auto nc = m.components_.size(), nd = m.datapaths_.size(), nh = m.type_heads_.size(),
                   na = m.attrs_.size();
        auto bad_link = [](std::uint32_t v, std::size_t n) { return v != nil && v >= n; };
        // A bool field holds 0 or 1; any other byte is read as neither (and
        // reading it as a bool is undefined behaviour), so look at the byte.
        auto bad_bool = [](const bool& b) {
            unsigned char byte;
            std::memcpy(&byte, &b, 1);
            return byte > 1;
        };
        for (const auto* t : {&m.words_, &m.keys_, &m.user_types_}) {
            if (t->offsets.empty() || t->offsets[0] != 0) return "string table without a start offset";
            for (std::size_t i = 1; i < t->offsets.size(); ++i)
                if (t->offsets[i] < t->offsets[i - 1] || t->offsets[i] > t->blob.size())
                    return "string table offsets out of order";
        }
        if (m.keys_.size() < keys::names.size()) return "attribute key table is too short";
        for (std::uint32_t k = 0; k < keys::names.size(); ++k)
            if (m.keys_.get(k) != keys::names[k]) return "attribute key table does not match this version";
        std::size_t live = 0;
        for (std::size_t i = 0; i < nc; ++i) {
            const auto& r = m.components_[i];
            if (bad_bool(r.alive)) return fmt::format("component {}: bad flag", i);
            if (static_cast<int>(r.type) >= kComponentTypeCount) return fmt::format("component {}: bad type", i);
            if (r.kind >= m.words_.size() || r.name >= m.words_.size()) return fmt::format("component {}: bad string", i);
            for (auto v : {r.parent, r.first_child, r.last_child, r.next_sibling, r.prev_sibling})
                if (bad_link(v, nc)) return fmt::format("component {}: link out of range", i);
            if (bad_link(r.first_attr, na) || bad_link(r.first_type_head, nh))
                return fmt::format("component {}: list head out of range", i);
            live += r.alive;
        }
        if (live != m.live_components_) return "live component count does not match";
        for (std::size_t i = 0; i < nd; ++i) {
            const auto& d = m.datapaths_[i];
            if (bad_bool(d.alive) || bad_bool(d.oriented)) return fmt::format("datapath {}: bad flag", i);
            if (d.source >= nc || d.target >= nc) return fmt::format("datapath {}: end out of range", i);
            for (auto v : {d.next_out, d.prev_out, d.next_in, d.prev_in})
                if (bad_link(v, nd)) return fmt::format("datapath {}: link out of range", i);
            if (bad_link(d.first_attr, na)) return fmt::format("datapath {}: attribute list out of range", i);
        }
        for (std::size_t i = 0; i < nh; ++i) {
            const auto& h = m.type_heads_[i];
            if (bad_link(h.out_head, nd) || bad_link(h.in_head, nd) || bad_link(h.next, nh))
                return fmt::format("datapath list {}: link out of range", i);
        }
        for (std::size_t i = 0; i < na; ++i) {
            const auto& a = m.attrs_[i];
            if (bad_link(a.next, na) || a.key >= m.keys_.size()) return fmt::format("attribute {}: out of range", i);
            if (a.kind == AttrKind::String &&
                std::uint64_t(a.span.offset) + a.span.length > m.chars_.size())
                return fmt::format("attribute {}: string out of range", i);
            if (a.kind == AttrKind::Cpuset &&
                std::uint64_t(a.span.offset) + a.span.length > m.cpuset_words_.size())
                return fmt::format("attribute {}: cpuset out of range", i);
            if (static_cast<int>(a.kind) > 3) return fmt::format("attribute {}: bad kind", i);
        }
        for (const auto& list : m.by_type_)
            for (auto v : list)
                if (v >= nc) return "type index out of range";
        if (auto problem = validate_lists(m); !problem.empty()) return problem;
        for (auto v : m.free_attrs_)
            if (v >= na) return "free attribute list out of range";
        return {};
    }
};

std::string snapshot_bytes(const Model& model) {
    auto sections = SnapshotAccess::sections(model);
    const std::size_t header_bytes = align_up(sizeof(ImageHeader) + sizeof(Section) * kSectionCount);
    std::vector<Section> table(kSectionCount);
    std::size_t at = header_bytes;
    for (std::uint32_t i = 0; i < kSectionCount; ++i) {
        table[i] = Section{i, static_cast<std::uint32_t>(sections[i].element_bytes), at, sections[i].count};
        at = align_up(at + sections[i].count * sections[i].element_bytes);
    }
    std::string image(at, '\0');
    auto* base = reinterpret_cast<unsigned char*>(image.data());
    for (std::uint32_t i = 0; i < kSectionCount; ++i)
        if (sections[i].count)
            std::memcpy(base + table[i].offset, sections[i].data, sections[i].count * sections[i].element_bytes);
    ImageHeader h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kSnapshotVersion;
    h.byte_order = kByteOrderMark;
    h.header_bytes = static_cast<std::uint32_t>(header_bytes);
    h.section_count = kSectionCount;
    auto sizes = SnapshotAccess::record_sizes();
    std::copy(sizes.begin(), sizes.end(), h.record_sizes);
    h.file_bytes = at;
    h.live_components = SnapshotAccess::live_components(model);
    h.live_datapaths = SnapshotAccess::live_datapaths(model);
    std::memcpy(base + sizeof(ImageHeader), table.data(), sizeof(Section) * kSectionCount);
    // The checksum covers the section table too: it is written first.
    h.checksum = checksum(base + header_bytes, at - header_bytes) ^
                 checksum(base + sizeof(ImageHeader), sizeof(Section) * kSectionCount);
    std::memcpy(base, &h, sizeof h);
    return image;
}

namespace {

// Checks an image and returns its model, borrowing (mapping != null) or
// copying the arrays.
Result<Model> adopt_image(const unsigned char* base, std::size_t size, const std::string& what,
                          std::shared_ptr<const void> mapping) {
    auto refuse = [&](const std::string& why) {
        return make_error(fmt::format("{}: not a usable stacksage snapshot: {}", what, why));
    };
    if (size < sizeof(ImageHeader)) {
        if (size >= sizeof kMagic && std::memcmp(base, kMagic, sizeof kMagic) == 0)
            return refuse(fmt::format("truncated ({} bytes, shorter than the header)", size));
        return refuse(size == 0 ? "the file is empty" : "no snapshot header (wrong magic)");
    }
    ImageHeader h;
    std::memcpy(&h, base, sizeof h);
    if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return refuse("no snapshot header (wrong magic)");
    if (h.byte_order != kByteOrderMark) {
        if (__builtin_bswap32(h.byte_order) == kByteOrderMark)
            return refuse("written on a machine of the other byte order; rewrite it on this machine");
        return refuse("unknown byte-order mark");
    }
    if (h.version != kSnapshotVersion)
        return refuse(fmt::format("format version {}, this stacksage reads version {}; rewrite it with this "
                                  "version (delete it and it will be rediscovered)",
                                  h.version, kSnapshotVersion));
    auto sizes = SnapshotAccess::record_sizes();
    if (h.section_count != kSectionCount || !std::equal(sizes.begin(), sizes.end(), h.record_sizes))
        return refuse("record layout differs from this build's");
    if (h.header_bytes < sizeof(ImageHeader) + sizeof(Section) * kSectionCount || h.header_bytes > size)
        return refuse("bad header size");
    if (h.file_bytes != size)
        return refuse(h.file_bytes > size ? fmt::format("truncated ({} of {} bytes)", size, h.file_bytes)
                                          : fmt::format("{} bytes, the header says {}", size, h.file_bytes));
    const auto* table = reinterpret_cast<const Section*>(base + sizeof(ImageHeader));
    std::uint64_t sum = checksum(base + h.header_bytes, size - h.header_bytes) ^
                        checksum(base + sizeof(ImageHeader), sizeof(Section) * kSectionCount);
    if (sum != h.checksum) return refuse("checksum mismatch (the file is damaged)");
    for (std::uint32_t i = 0; i < kSectionCount; ++i) {
        const Section& s = table[i];
        if (s.id != i || s.offset % 8 != 0 || s.offset < h.header_bytes || s.offset > size ||
            s.count > (size - s.offset) / std::max<std::uint32_t>(s.element_bytes, 1))
            return refuse(fmt::format("section {} out of bounds", i));
    }
    Model model = SnapshotAccess::adopt(base, table, h, mapping);
    if (auto problem = SnapshotAccess::validate(model); !problem.empty()) return refuse(problem);
    if (!mapping) {
        Model owned = model;  // copies the borrowed arrays on the first change
        owned.reserve(0);     // a change: takes ownership now, while `base` is valid
        return owned;
    }
    return model;
}

}  // namespace

namespace detail {
void fix_snapshot_checksum(void* image, std::size_t size) {
    auto* base = static_cast<unsigned char*>(image);
    if (size < sizeof(ImageHeader) + sizeof(Section) * kSectionCount) return;
    ImageHeader h;
    std::memcpy(&h, base, sizeof h);
    if (h.header_bytes < sizeof(ImageHeader) + sizeof(Section) * kSectionCount || h.header_bytes > size) return;
    h.checksum = checksum(base + h.header_bytes, size - h.header_bytes) ^
                 checksum(base + sizeof(ImageHeader), sizeof(Section) * kSectionCount);
    std::memcpy(base, &h, sizeof h);
}
}  // namespace detail

Result<Model> read_snapshot_bytes(const void* data, std::size_t size, const std::string& what) {
    // Sections are read in place: copy to aligned memory first if needed.
    if (reinterpret_cast<std::uintptr_t>(data) % 8 != 0) {
        std::vector<std::uint64_t> aligned((size + 7) / 8);
        std::memcpy(aligned.data(), data, size);
        return adopt_image(reinterpret_cast<const unsigned char*>(aligned.data()), size, what, nullptr);
    }
    return adopt_image(static_cast<const unsigned char*>(data), size, what, nullptr);
}

Result<Model> open_snapshot(const std::string& path) {
    // O_NONBLOCK: a FIFO planted at the name would otherwise block the open
    // until a writer comes (inside a traced application's exit, forever);
    // it is refused below as not a regular file. No effect on a file.
    int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return make_error(fmt::format("{}: cannot open snapshot: {}", path, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return make_error(fmt::format("{}: not a regular file", path));
    }
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) {
        ::close(fd);
        return make_error(fmt::format("{}: not a usable stacksage snapshot: the file is empty", path));
    }
    // MAP_POPULATE: one call maps every page instead of a fault per page on
    // first use (the checksum reads them all anyway).
    void* p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (p == MAP_FAILED) return make_error(fmt::format("{}: cannot map snapshot: {}", path, std::strerror(errno)));
    std::shared_ptr<const void> mapping(p, [size](const void* q) { munmap(const_cast<void*>(q), size); });
    return adopt_image(static_cast<const unsigned char*>(p), size, path, std::move(mapping));
}

Status write_snapshot(const Model& model, const std::string& path) {
    // The reader refuses shared attribute lists (a list is one owner's).
    if (model.has_shared_attributes())
        return make_error(fmt::format("{}: the model shares attribute lists between components (a run's merged "
                                      "model); only a model of its own lists, such as a node's topology, is "
                                      "written as a snapshot",
                                      path));
    std::string image = snapshot_bytes(model);
    std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return make_error(fmt::format("{}: cannot create snapshot: {}", tmp, std::strerror(errno)));
    std::size_t done = 0;
    while (done < image.size()) {
        ssize_t n = ::write(fd, image.data() + done, image.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            return make_error(fmt::format("{}: cannot write snapshot: {}", tmp, std::strerror(err)));
        }
        done += static_cast<std::size_t>(n);
    }
    if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        return make_error(fmt::format("{}: cannot publish snapshot: {}", path, std::strerror(err)));
    }
    return Ok{};
}

}  // namespace stacksage
