#include "preload/sampling/static_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "preload/raw_syscall.hpp"

namespace stacksage::sampling {

std::uint32_t path_hash(const char* path, std::size_t len) {
    std::uint32_t h = 2166136261u;
    for (std::size_t i = 0; i < len; ++i) h = (h ^ static_cast<unsigned char>(path[i])) * 16777619u;
    return h;
}

const StaticSymbols::File* StaticSymbols::file_of(std::uint64_t inode, std::uint32_t hash) const {
    for (std::uint32_t i = 0; i < file_count_; ++i)
        if (files_[i].inode == inode && files_[i].path_hash == hash) return &files_[i];
    return nullptr;
}

bool StaticSymbols::add_image(const unsigned char* image, std::size_t bytes, std::uint64_t inode, std::uint32_t hash) {
    if (file_count_ == kMaxFiles) return false;
    File& f = files_[file_count_++];
    f = File{inode, hash, used_, 0, false};
    if (bytes < sizeof(Elf64_Ehdr)) return false;
    Elf64_Ehdr eh;
    std::memcpy(&eh, image, sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_shoff > bytes ||
        eh.e_shnum > (bytes - eh.e_shoff) / sizeof(Elf64_Shdr) || eh.e_phoff > bytes ||
        eh.e_phnum > (bytes - eh.e_phoff) / sizeof(Elf64_Phdr))
        return false;
    const auto* sections = reinterpret_cast<const unsigned char*>(image + eh.e_shoff);
    const auto* segments = reinterpret_cast<const unsigned char*>(image + eh.e_phoff);
    // .symtab, or .dynsym when the file is stripped.
    Elf64_Shdr table{};
    bool found = false;
    for (std::uint32_t want : {static_cast<std::uint32_t>(SHT_SYMTAB), static_cast<std::uint32_t>(SHT_DYNSYM)}) {
        for (std::uint16_t i = 0; i < eh.e_shnum && !found; ++i) {
            Elf64_Shdr sh;
            std::memcpy(&sh, sections + i * sizeof sh, sizeof sh);
            if (sh.sh_type == want && sh.sh_entsize == sizeof(Elf64_Sym) && sh.sh_offset <= bytes &&
                sh.sh_size <= bytes - sh.sh_offset) {
                table = sh;
                found = true;
            }
        }
        if (found) break;
    }
    f.readable = true;
    if (!found) return true;
    const std::size_t n = table.sh_size / sizeof(Elf64_Sym);
    for (std::size_t i = 0; i < n && used_ < kPoolSymbols; ++i) {
        Elf64_Sym sym;
        std::memcpy(&sym, image + table.sh_offset + i * sizeof sym, sizeof sym);
        if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_size == 0 || sym.st_shndx == SHN_UNDEF ||
            sym.st_shndx >= SHN_LORESERVE)
            continue;
        // Its file offset through the loaded segment that holds it.
        for (std::uint16_t p = 0; p < eh.e_phnum; ++p) {
            Elf64_Phdr ph;
            std::memcpy(&ph, segments + p * sizeof ph, sizeof ph);
            if (ph.p_type != PT_LOAD || sym.st_value < ph.p_vaddr || sym.st_value >= ph.p_vaddr + ph.p_memsz) continue;
            pool_[used_++] = Symbol{ph.p_offset + (sym.st_value - ph.p_vaddr), sym.st_size};
            break;
        }
    }
    f.count = used_ - f.first;
    std::sort(pool_ + f.first, pool_ + used_, [](const Symbol& a, const Symbol& b) { return a.offset < b.offset; });
    return true;
}

bool StaticSymbols::load(const char* path, std::uint64_t inode, std::uint32_t hash) {
    const long fd = preload::raw::openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (file_count_ < kMaxFiles) files_[file_count_++] = File{inode, hash, used_, 0, false};
        return false;
    }
    struct stat st{};
    const bool regular = preload::raw::fstat(static_cast<int>(fd), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
    const long addr = regular ? preload::raw::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ,
                                                   MAP_PRIVATE, static_cast<int>(fd), 0)
                              : -EINVAL;
    preload::raw::close(static_cast<int>(fd));
    if (addr < 0 && addr > -4096) {
        if (file_count_ < kMaxFiles) files_[file_count_++] = File{inode, hash, used_, 0, false};
        return false;
    }
    const bool ok = add_image(reinterpret_cast<const unsigned char*>(addr), static_cast<std::size_t>(st.st_size), inode,
                              hash);
    preload::raw::munmap(reinterpret_cast<void*>(addr), static_cast<std::size_t>(st.st_size));
    return ok;
}

bool StaticSymbols::variable_start(const char* path, std::uint64_t inode, std::uint64_t offset, std::uint64_t& start) {
    if (pool_ == nullptr) return false;
    // Held while a file is read (milliseconds); never waited on for ever.
    BoundedSpinGuard guard(lock_, 100000);
    if (!guard.held()) return false;
    const std::uint32_t hash = path_hash(path, std::strlen(path));
    const File* f = file_of(inode, hash);
    if (f == nullptr) {
        if (file_count_ == kMaxFiles) return false;
        load(path, inode, hash);
        f = file_of(inode, hash);
        if (f == nullptr) return false;
    }
    if (!f->readable || f->count == 0) return false;
    // The last symbol starting at or before offset.
    const Symbol* first = pool_ + f->first;
    const Symbol* last = first + f->count;
    const Symbol* it = std::upper_bound(first, last, offset, [](std::uint64_t o, const Symbol& s) { return o < s.offset; });
    if (it == first) return false;
    --it;
    if (offset >= it->offset + it->size) return false;
    start = it->offset;
    return true;
}

}  // namespace stacksage::sampling
