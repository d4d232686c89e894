// The address space of a sampled process as the recorder saw it (its
// SampledModule list, sample_summary_schema::module): which mapping an
// instruction or data address lies in, and at which offset of the mapped file.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "parsers/sample_summary.hpp"

namespace stacksage {

struct ModuleAddress {
    const SampledModule* module = nullptr;
    std::uint64_t file_offset = 0;  // the address's offset in the module's file
};

class ProcessAddressSpace {
public:
    // Where records overlap (a mapping recorded at exec and again at the
    // end, replaced in between), the later record wins.
    explicit ProcessAddressSpace(std::vector<SampledModule> modules);

    // \return the mapping holding address and the offset in its file;
    //         nullopt when no recorded mapping holds it.
    std::optional<ModuleAddress> locate(std::uint64_t address) const;
    // \return the module record with this id; nullptr when there is none.
    const SampledModule* module_by_id(std::int64_t id) const;
    const std::vector<SampledModule>& modules() const { return modules_; }

private:
    std::vector<SampledModule> modules_;  // in record order
    std::vector<std::size_t> by_start_;   // indexes into modules_, sorted by start, later records first on ties
    std::vector<std::uint64_t> max_end_;  // the largest end among by_start_[0..pos]
};

}  // namespace stacksage
