// Which variable of a module a static data address belongs to: the data
// symbols (STT_OBJECT, with a size) of the module's file, read from its
// .symtab (.dynsym when stripped) the first time a sample lands in the
// file's data, as (file offset, size) pairs sorted by offset.
//
// A static data object is then the variable (one object for all its
// pages), named after the run from the module and the offset; an address
// no symbol covers stays one object per 4 KiB page. Only numbers are kept
// (no names: the post-run side reads them with the debug information).
// Files are mapped read-only for the read and unmapped; the pairs live in
// one pool mapped once (untouched pages cost nothing). A lock guards the
// table: the first lookup in a file reads it (a few milliseconds for a
// large binary, once), later ones are a binary search.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/sampling/spin_lock.hpp"

namespace stacksage::sampling {

class StaticSymbols {
public:
    static constexpr std::uint32_t kMaxFiles = 128;
    static constexpr std::uint32_t kPoolSymbols = 1u << 18;

    struct Symbol {
        std::uint64_t offset, size;  // in the file, as the loader maps it (past the file's end for .bss)
    };

    // Uses zeroed memory of bytes_for() (fresh mmap).
    static std::size_t bytes_for() { return kPoolSymbols * sizeof(Symbol); }
    void init(void* memory) { pool_ = static_cast<Symbol*>(memory); }

    // The file offset where the variable holding file offset `offset` of
    // the file at path (NUL-terminated; inode tells files of one name apart)
    // starts, in start. \return false when no data symbol holds it or the
    // file cannot be read as an ELF file.
    bool variable_start(const char* path, std::uint64_t inode, std::uint64_t offset, std::uint64_t& start);

    // Reads an ELF image in memory (tests): appends its data symbols to the
    // pool as one more file. \return false when it is not a readable ELF64 image.
    bool add_image(const unsigned char* image, std::size_t bytes, std::uint64_t inode, std::uint32_t path_hash);

    void reset_lock() { lock_.reset(); }

private:
    struct File {
        std::uint64_t inode;
        std::uint32_t path_hash;
        std::uint32_t first, count;  // in the pool
        bool readable;
    };
    const File* file_of(std::uint64_t inode, std::uint32_t path_hash) const;
    bool load(const char* path, std::uint64_t inode, std::uint32_t path_hash);

    Symbol* pool_ = nullptr;
    std::uint32_t used_ = 0;
    File files_[kMaxFiles] = {};
    std::uint32_t file_count_ = 0;
    SpinLock lock_;
};

std::uint32_t path_hash(const char* path, std::size_t len);

}  // namespace stacksage::sampling
