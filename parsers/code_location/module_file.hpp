// The ELF file behind a recorded mapping, opened after the run: its build id
// (checked against the one the recorder saw), where a mapping places it
// (the load bias), its bytes by virtual address (what the unwinder reads of
// code and unwind tables), and its .eh_frame_hdr search table.
//
// Files are opened once per path and build id (ModuleFiles) and mapped
// read-only; nothing is written.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "parsers/code_location/code_location.hpp"
#include "parsers/sample_summary.hpp"

namespace stacksage {

class ModuleFile {
public:
    // \return the opened file (gap() None), or one whose gap() says why it
    //         cannot be used: NoFile (missing, unreadable, not ELF) or
    //         BuildIdMismatch (expected_build_id is not "" and differs).
    static std::shared_ptr<const ModuleFile> open(const std::string& path, const std::string& expected_build_id);
    ~ModuleFile();
    ModuleFile(const ModuleFile&) = delete;
    ModuleFile& operator=(const ModuleFile&) = delete;

    const std::string& path() const { return path_; }
    CodeGap gap() const { return gap_; }
    const std::string& why() const { return why_; }  // with a gap: the reason, for notes
    const std::string& build_id() const { return build_id_; }  // hex, "" none

    // \return the load bias when mapping (a mapping of this file) is in
    //         place: a runtime address = bias + an ELF virtual address;
    //         nullopt when no loadable segment holds the mapping's offset.
    std::optional<std::uint64_t> load_bias(const SampledModule& mapping) const;
    // Copies size bytes at ELF virtual address vaddr from the file's loadable
    // segments. \return false when any byte is outside their file part
    // (.bss, past the end).
    bool read(std::uint64_t vaddr, void* out, std::size_t size) const;

    struct EhFrameHdr {
        std::uint64_t vaddr = 0;        // of .eh_frame_hdr
        std::uint64_t table_vaddr = 0;  // of its binary search table
        std::uint64_t fde_count = 0;
    };
    // \return the search table of .eh_frame_hdr (PT_GNU_EH_FRAME); nullopt
    //         when the file has none or its encoding is not the sorted
    //         table (datarel sdata4) that libunwind searches.
    const std::optional<EhFrameHdr>& eh_frame_hdr() const { return eh_frame_hdr_; }

private:
    ModuleFile() = default;
    struct Segment {
        std::uint64_t vaddr = 0, offset = 0, filesz = 0;
    };
    std::string path_;
    CodeGap gap_ = CodeGap::NoFile;
    std::string why_;
    std::string build_id_;
    const std::uint8_t* bytes_ = nullptr;
    std::size_t size_ = 0;
    std::vector<Segment> loads_;
    std::optional<EhFrameHdr> eh_frame_hdr_;
};

// The files of one run's modules, each opened once.
class ModuleFiles {
public:
    // \return the file for mapping (its path and build id); the same object
    //         for every mapping of one path and build id.
    std::shared_ptr<const ModuleFile> of(const SampledModule& mapping);

private:
    std::map<std::pair<std::string, std::string>, std::shared_ptr<const ModuleFile>> files_;
};

}  // namespace stacksage
