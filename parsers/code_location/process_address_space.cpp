#include "parsers/code_location/process_address_space.hpp"

#include <algorithm>
#include <numeric>

namespace stacksage {

ProcessAddressSpace::ProcessAddressSpace(std::vector<SampledModule> modules) : modules_(std::move(modules)) {
    by_start_.resize(modules_.size());
    std::iota(by_start_.begin(), by_start_.end(), std::size_t{0});
    std::stable_sort(by_start_.begin(), by_start_.end(), [&](std::size_t a, std::size_t b) {
        if (modules_[a].start != modules_[b].start) return modules_[a].start < modules_[b].start;
        return a > b;
    });
    max_end_.resize(by_start_.size());
    std::uint64_t reach = 0;
    for (std::size_t pos = 0; pos < by_start_.size(); ++pos) max_end_[pos] = reach = std::max(reach, modules_[by_start_[pos]].end);
}

std::optional<ModuleAddress> ProcessAddressSpace::locate(std::uint64_t address) const {
    // The candidates start at or below address; look back while an earlier
    // mapping could still reach it (max_end_), keeping the latest record.
    auto it = std::upper_bound(by_start_.begin(), by_start_.end(), address,
                               [&](std::uint64_t a, std::size_t i) { return a < modules_[i].start; });
    const SampledModule* best = nullptr;
    std::size_t best_index = 0;
    for (auto pos = static_cast<std::size_t>(it - by_start_.begin()); pos > 0 && max_end_[pos - 1] > address; --pos) {
        const std::size_t i = by_start_[pos - 1];
        if (address < modules_[i].end && (best == nullptr || i > best_index)) {
            best = &modules_[i];
            best_index = i;
        }
    }
    if (best == nullptr) return std::nullopt;
    return ModuleAddress{best, best->file_offset + (address - best->start)};
}

const SampledModule* ProcessAddressSpace::module_by_id(std::int64_t id) const {
    for (const SampledModule& m : modules_)
        if (m.id == id) return &m;
    return nullptr;
}

}  // namespace stacksage
