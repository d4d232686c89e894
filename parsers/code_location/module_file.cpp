#include "parsers/code_location/module_file.hpp"

#include <dwarf.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stacksage {

namespace {

std::string hex(const std::uint8_t* p, std::size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
        out += digits[p[i] >> 4];
        out += digits[p[i] & 15];
    }
    return out;
}

constexpr std::size_t align4(std::size_t n) { return (n + 3) & ~std::size_t{3}; }

// The GNU build id among the notes of [p, p + size).
std::string build_id_in_notes(const std::uint8_t* p, std::size_t size) {
    std::size_t at = 0;
    while (at + 12 <= size) {
        std::uint32_t namesz, descsz, type;
        std::memcpy(&namesz, p + at, 4);
        std::memcpy(&descsz, p + at + 4, 4);
        std::memcpy(&type, p + at + 8, 4);
        const std::size_t name_at = at + 12, desc_at = name_at + align4(namesz);
        if (desc_at + descsz > size || desc_at < name_at) break;
        if (type == NT_GNU_BUILD_ID && namesz == 4 && std::memcmp(p + name_at, "GNU", 4) == 0)
            return hex(p + desc_at, descsz);
        at = desc_at + align4(descsz);
    }
    return "";
}

}  // namespace

std::shared_ptr<const ModuleFile> ModuleFile::open(const std::string& path, const std::string& expected_build_id) {
    std::shared_ptr<ModuleFile> f(new ModuleFile);
    f->path_ = path;
    // O_NONBLOCK: a path from a run directory may name a FIFO; opening it must not wait.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        f->why_ = path + ": " + std::strerror(errno);
        return f;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < static_cast<off_t>(sizeof(Elf64_Ehdr))) {
        ::close(fd);
        f->why_ = path + ": not a regular ELF file";
        return f;
    }
    void* map = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
        f->why_ = path + ": cannot be mapped: " + std::strerror(errno);
        return f;
    }
    f->bytes_ = static_cast<const std::uint8_t*>(map);
    f->size_ = static_cast<std::size_t>(st.st_size);

    elf_version(EV_CURRENT);
    Elf* elf = elf_memory(reinterpret_cast<char*>(const_cast<std::uint8_t*>(f->bytes_)), f->size_);
    std::size_t phnum = 0;
    if (elf == nullptr || elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &phnum) != 0) {
        if (elf != nullptr) elf_end(elf);
        f->why_ = path + ": not an ELF file";
        return f;
    }
    std::optional<GElf_Phdr> eh_frame;
    for (std::size_t i = 0; i < phnum; ++i) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, static_cast<int>(i), &ph) == nullptr) continue;
        if (ph.p_type == PT_LOAD) f->loads_.push_back({ph.p_vaddr, ph.p_offset, ph.p_filesz});
        if (ph.p_type == PT_NOTE && ph.p_offset + ph.p_filesz <= f->size_ && f->build_id_.empty())
            f->build_id_ = build_id_in_notes(f->bytes_ + ph.p_offset, ph.p_filesz);
        if (ph.p_type == PT_GNU_EH_FRAME) eh_frame = ph;
    }
    elf_end(elf);

    // .eh_frame_hdr: version 1, three encodings, eh_frame_ptr, fde_count,
    // then the sorted table of (initial location, FDE) pairs.
    if (eh_frame && eh_frame->p_filesz >= 12 && eh_frame->p_offset + 12 <= f->size_) {
        const std::uint8_t* h = f->bytes_ + eh_frame->p_offset;
        const bool udata4_count = h[2] == (DW_EH_PE_udata4);
        const bool datarel_sdata4_table = h[3] == (DW_EH_PE_datarel | DW_EH_PE_sdata4);
        const bool sdata4_ptr = (h[1] & 0x0f) == DW_EH_PE_sdata4;
        if (h[0] == 1 && udata4_count && datarel_sdata4_table && sdata4_ptr) {
            std::uint32_t count;
            std::memcpy(&count, h + 8, 4);
            f->eh_frame_hdr_ = EhFrameHdr{eh_frame->p_vaddr, eh_frame->p_vaddr + 12, count};
        }
    }
    if (!expected_build_id.empty() && f->build_id_ != expected_build_id) {
        f->gap_ = CodeGap::BuildIdMismatch;
        f->why_ = path + ": build id " + (f->build_id_.empty() ? "none" : f->build_id_) + ", the run had " +
                  expected_build_id;
        return f;
    }
    f->gap_ = CodeGap::None;
    return f;
}

ModuleFile::~ModuleFile() {
    if (bytes_ != nullptr) munmap(const_cast<std::uint8_t*>(bytes_), size_);
}

std::optional<std::uint64_t> ModuleFile::load_bias(const SampledModule& mapping) const {
    constexpr std::uint64_t kPage = 4096;
    for (const Segment& s : loads_) {
        // The kernel maps whole pages: the mapping of a segment starts at its
        // offset rounded down to a page.
        if (mapping.file_offset >= (s.offset & ~(kPage - 1)) && mapping.file_offset < s.offset + s.filesz)
            return mapping.start - mapping.file_offset - s.vaddr + s.offset;
    }
    return std::nullopt;
}

bool ModuleFile::read(std::uint64_t vaddr, void* out, std::size_t size) const {
    for (const Segment& s : loads_) {
        if (vaddr < s.vaddr || vaddr - s.vaddr > s.filesz || s.filesz - (vaddr - s.vaddr) < size) continue;
        const std::uint64_t at = s.offset + (vaddr - s.vaddr);
        if (at + size > size_) return false;
        std::memcpy(out, bytes_ + at, size);
        return true;
    }
    return false;
}

std::shared_ptr<const ModuleFile> ModuleFiles::of(const SampledModule& mapping) {
    auto [it, fresh] = files_.try_emplace({mapping.path, mapping.build_id});
    if (fresh) it->second = ModuleFile::open(mapping.path, mapping.build_id);
    return it->second;
}

}  // namespace stacksage
