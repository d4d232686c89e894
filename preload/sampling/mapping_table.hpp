// The process's mappings that give an address a module (docs/sample-file.md,
// "Code and data": `module` records): file-backed mappings, the vDSO and
// anonymous executable memory (a JIT's), read from /proc/self/maps.
//
// A module's id is its index here. The table only grows: a refresh (at
// start, when a sampled return address lies in no executable mapping, and
// at the end) appends the mappings it has not seen, so ids stay valid and
// an address unmapped since keeps the module it had. Entries are published
// by their count (release), so readers never lock; refreshes take a lock
// among themselves. A file's .bss (the anonymous mapping right after the
// file's last one) is listed under the file's path, with the file offset it
// would have, so that static data there gets a module and an offset too.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "preload/sampling/spin_lock.hpp"

namespace stacksage::sampling {

enum class ModuleKind : std::uint8_t { File = 0, Vdso = 1, AnonExec = 2 };

struct Mapping {
    std::uint64_t start = 0, end = 0, file_offset = 0, inode = 0;
    std::uint32_t path_at = 0;  // in the path pool
    std::uint16_t path_len = 0;
    ModuleKind kind = ModuleKind::File;
    bool executable = false;
    bool writable = false;
    std::uint8_t build_id_len = 0;
    unsigned char build_id[20] = {};
};

class MappingTable {
public:
    static constexpr std::uint32_t kCapacity = 2048;
    static constexpr std::uint32_t kPathPool = 256 * 1024;

    // Reads maps_path (nullptr: /proc/self/maps) and adds what is new.
    // buffer: scratch for reading (at least 4 KiB). \return false when it
    // cannot be read.
    bool refresh(const char* maps_path, char* buffer, std::size_t buffer_cap);
    // The same from text already read (tests).
    void add_maps_text(const char* text, std::size_t len);

    // The newest mapping holding address, or -1.
    std::int32_t find(std::uint64_t address) const;
    // The mapping of the same file (inode and path) that maps file offset
    // `offset` (a .bss one included), or -1.
    std::int32_t find_file_offset(const Mapping& of, std::uint64_t offset) const;
    bool executable(std::uint64_t address) const {
        const std::int32_t i = find(address);
        return i >= 0 && entries_[i].executable;
    }
    std::uint32_t count() const { return count_.load(std::memory_order_acquire); }
    const Mapping& at(std::uint32_t i) const { return entries_[i]; }
    // The path (not NUL-terminated; path_len bytes): "" for anonymous code.
    const char* path(const Mapping& m) const { return paths_ + m.path_at; }
    std::uint64_t dropped() const { return dropped_; }

    // Fills each file mapping's build id from the loaded images' PT_NOTE
    // (dl_iterate_phdr): files the dynamic loader did not load have none.
    void read_build_ids();

    // In a forked child.
    void reset_lock() { lock_.reset(); }
    // Files under this directory (the recorder's output: its logs) are not
    // the application's and are left out. Set before the first refresh.
    void exclude_directory(const char* dir);

private:
    void add_line(const char* line, std::size_t len, Mapping& previous, bool& have_previous);
    bool known(const Mapping& m, const char* path, std::size_t path_len) const;
    void append(const Mapping& m, const char* path, std::size_t path_len);

    Mapping entries_[kCapacity];
    char paths_[kPathPool];
    std::uint32_t paths_used_ = 0;
    std::atomic<std::uint32_t> count_{0};
    std::uint64_t dropped_ = 0;
    char excluded_[512] = {};
    std::size_t excluded_len_ = 0;
    SpinLock lock_;
};

}  // namespace stacksage::sampling
