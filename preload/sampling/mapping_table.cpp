#include "preload/sampling/mapping_table.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstring>

#include "preload/raw_syscall.hpp"

namespace stacksage::sampling {

namespace {

const char* parse_hex(const char* p, const char* end, std::uint64_t& out) {
    out = 0;
    for (; p < end; ++p) {
        const char c = *p;
        unsigned d;
        if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f') d = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') d = static_cast<unsigned>(c - 'A' + 10);
        else break;
        out = out << 4 | d;
    }
    return p;
}
const char* parse_dec(const char* p, const char* end, std::uint64_t& out) {
    out = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) out = out * 10 + static_cast<std::uint64_t>(*p - '0');
    return p;
}
const char* skip_spaces(const char* p, const char* end) {
    while (p < end && *p == ' ') ++p;
    return p;
}
const char* skip_field(const char* p, const char* end) {
    while (p < end && *p != ' ') ++p;
    return skip_spaces(p, end);
}

}  // namespace

// "start-end perms offset dev inode   path"
void MappingTable::add_line(const char* line, std::size_t len, Mapping& previous, bool& have_previous) {
    const char* p = line;
    const char* end = line + len;
    Mapping m;
    p = parse_hex(p, end, m.start);
    if (p >= end || *p != '-') return;
    p = parse_hex(p + 1, end, m.end);
    p = skip_spaces(p, end);
    if (end - p < 4) return;
    const bool readable = p[0] == 'r';
    m.writable = p[1] == 'w';
    m.executable = p[2] == 'x';
    (void)readable;
    p = skip_field(p, end);
    p = parse_hex(p, end, m.file_offset);
    p = skip_spaces(p, end);
    p = skip_field(p, end);  // dev
    p = parse_dec(p, end, m.inode);
    p = skip_spaces(p, end);
    const char* path = p;
    std::size_t path_len = static_cast<std::size_t>(end - p);
    const bool this_previous_ok = have_previous;
    const Mapping before = previous;
    previous = m;
    have_previous = true;
    if (path_len > 0 && path[0] == '/') {
        if (excluded_len_ > 0 && path_len > excluded_len_ && std::memcmp(path, excluded_, excluded_len_) == 0 &&
            path[excluded_len_] == '/') {
            have_previous = false;
            return;
        }
        m.kind = ModuleKind::File;
        if (!known(m, path, path_len)) append(m, path, path_len);
        // Remember where this file's text is, for its .bss below.
        for (std::uint32_t i = count(); i-- > 0;)
            if (entries_[i].start == m.start && entries_[i].end == m.end) {
                previous = entries_[i];
                break;
            }
        return;
    }
    if (path_len == 6 && std::memcmp(path, "[vdso]", 6) == 0) {
        m.kind = ModuleKind::Vdso;
        if (!known(m, path, path_len)) append(m, path, path_len);
        return;
    }
    if (path_len != 0) return;  // [heap], [stack], [vvar] and the like
    if (m.executable) {
        m.kind = ModuleKind::AnonExec;
        m.file_offset = 0;
        if (!known(m, "", 0)) append(m, "", 0);
        return;
    }
    // The .bss of the file mapped right before, when that was a writable
    // file mapping: the file's path, the offset the file would have there.
    if (this_previous_ok && before.kind == ModuleKind::File && before.path_len > 0 && before.writable &&
        before.end == m.start && m.inode == 0) {
        Mapping bss = m;
        bss.kind = ModuleKind::File;
        bss.inode = before.inode;
        bss.file_offset = before.file_offset + (before.end - before.start);
        const char* file = paths_ + before.path_at;
        if (!known(bss, file, before.path_len)) {
            // The pool may move nothing: the path stays where it is; share it.
            if (count() < kCapacity) {
                bss.path_at = before.path_at;
                bss.path_len = before.path_len;
                entries_[count()] = bss;
                count_.store(count() + 1, std::memory_order_release);
            } else {
                ++dropped_;
            }
        }
        previous = bss;
        have_previous = false;  // one .bss per file
    }
}

void MappingTable::exclude_directory(const char* dir) {
    excluded_len_ = 0;
    if (dir == nullptr) return;
    std::size_t n = std::strlen(dir);
    while (n > 1 && dir[n - 1] == '/') --n;
    if (n == 0 || n >= sizeof excluded_) return;
    std::memcpy(excluded_, dir, n);
    excluded_len_ = n;
}

bool MappingTable::known(const Mapping& m, const char* path, std::size_t path_len) const {
    for (std::uint32_t i = count(); i-- > 0;) {
        const Mapping& e = entries_[i];
        if (e.start == m.start && e.end == m.end && e.file_offset == m.file_offset && e.inode == m.inode &&
            e.path_len == path_len && std::memcmp(paths_ + e.path_at, path, path_len) == 0)
            return true;
    }
    return false;
}

void MappingTable::append(const Mapping& m, const char* path, std::size_t path_len) {
    const std::uint32_t n = count();
    if (n >= kCapacity || path_len > 0xffff || paths_used_ + path_len > kPathPool) {
        ++dropped_;
        return;
    }
    Mapping e = m;
    e.path_at = paths_used_;
    e.path_len = static_cast<std::uint16_t>(path_len);
    std::memcpy(paths_ + paths_used_, path, path_len);
    paths_used_ += static_cast<std::uint32_t>(path_len);
    entries_[n] = e;
    count_.store(n + 1, std::memory_order_release);
}

void MappingTable::add_maps_text(const char* text, std::size_t len) {
    SpinGuard guard(lock_);
    Mapping previous;
    bool have_previous = false;
    std::size_t at = 0;
    while (at < len) {
        std::size_t e = at;
        while (e < len && text[e] != '\n') ++e;
        add_line(text + at, e - at, previous, have_previous);
        at = e + 1;
    }
}

bool MappingTable::refresh(const char* maps_path, char* buffer, std::size_t buffer_cap) {
    if (!lock_.try_lock()) return true;  // another thread is at it
    const long fd = preload::raw::openat(AT_FDCWD, maps_path ? maps_path : "/proc/self/maps",
                                         O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        lock_.unlock();
        return false;
    }
    Mapping previous;
    bool have_previous = false;
    std::size_t held = 0;
    while (true) {
        const long n = preload::raw::read(static_cast<int>(fd), buffer + held, buffer_cap - held);
        if (n == -EINTR) continue;
        if (n <= 0) break;
        held += static_cast<std::size_t>(n);
        std::size_t at = 0;
        while (true) {
            std::size_t e = at;
            while (e < held && buffer[e] != '\n') ++e;
            if (e == held) break;
            add_line(buffer + at, e - at, previous, have_previous);
            at = e + 1;
        }
        // Keep the unfinished line; a line longer than the buffer is skipped.
        if (at == 0 && held == buffer_cap) held = 0;
        std::memmove(buffer, buffer + at, held - at);
        held -= at;
    }
    if (held > 0) add_line(buffer, held, previous, have_previous);
    preload::raw::close(static_cast<int>(fd));
    lock_.unlock();
    return true;
}

std::int32_t MappingTable::find_file_offset(const Mapping& of, std::uint64_t offset) const {
    for (std::uint32_t i = count(); i-- > 0;) {
        const Mapping& e = entries_[i];
        if (e.inode == of.inode && e.kind == ModuleKind::File && offset >= e.file_offset &&
            offset < e.file_offset + (e.end - e.start) && e.path_len == of.path_len &&
            std::memcmp(paths_ + e.path_at, paths_ + of.path_at, of.path_len) == 0)
            return static_cast<std::int32_t>(i);
    }
    return -1;
}

std::int32_t MappingTable::find(std::uint64_t address) const {
    for (std::uint32_t i = count(); i-- > 0;) {
        const Mapping& e = entries_[i];
        if (address >= e.start && address < e.end) return static_cast<std::int32_t>(i);
    }
    return -1;
}

namespace {

struct BuildIdSearch {
    MappingTable* table;
    Mapping* entries;
    std::uint32_t count;
};

// The NT_GNU_BUILD_ID note in a loaded PT_NOTE segment, or 0 bytes.
std::size_t build_id_of(const dl_phdr_info* info, const ElfW(Phdr)& ph, unsigned char* out) {
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    std::size_t left = ph.p_memsz;
    while (left >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) n;
        std::memcpy(&n, p, sizeof n);
        const std::size_t name_bytes = (n.n_namesz + 3) & ~std::size_t{3};
        const std::size_t desc_bytes = (n.n_descsz + 3) & ~std::size_t{3};
        const std::size_t whole = sizeof n + name_bytes + desc_bytes;
        if (whole > left) break;
        if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(p + sizeof n, "GNU", 4) == 0 &&
            n.n_descsz > 0 && n.n_descsz <= 20) {
            std::memcpy(out, p + sizeof n + name_bytes, n.n_descsz);
            return n.n_descsz;
        }
        p += whole;
        left -= whole;
    }
    return 0;
}

int visit_image(dl_phdr_info* info, std::size_t, void* data) {
    auto& search = *static_cast<BuildIdSearch*>(data);
    unsigned char id[20];
    std::size_t id_len = 0;
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_NOTE && id_len == 0) id_len = build_id_of(info, ph, id);
        if (ph.p_type == PT_LOAD) {
            const std::uint64_t start = info->dlpi_addr + ph.p_vaddr;
            if (start < lo) lo = start;
            if (start + ph.p_memsz > hi) hi = start + ph.p_memsz;
        }
    }
    if (id_len == 0 || lo >= hi) return 0;
    // Every mapping of this image: those within its loaded range (page-rounded).
    lo &= ~std::uint64_t{0xfff};
    hi = (hi + 0xfff) & ~std::uint64_t{0xfff};
    for (std::uint32_t i = 0; i < search.count; ++i) {
        Mapping& m = search.entries[i];
        if (m.start >= lo && m.end <= hi && m.build_id_len == 0) {
            std::memcpy(m.build_id, id, id_len);
            m.build_id_len = static_cast<std::uint8_t>(id_len);
        }
    }
    return 0;
}

}  // namespace

void MappingTable::read_build_ids() {
    BuildIdSearch search{this, entries_, count()};
    dl_iterate_phdr(&visit_image, &search);
}

}  // namespace stacksage::sampling
