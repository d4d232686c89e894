// Cpuset parsing: any text either parses to a set that prints back to an
// equal set, or is refused; never a crash or a hang.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/cpuset.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view text(reinterpret_cast<const char*>(data), size);
    using stacksage::Cpuset;
    if (auto list = Cpuset::parse_list(text)) {
        if (Cpuset::parse_list(list->to_list_string()) != list) std::abort();
        if (Cpuset::parse_hwloc_mask(list->to_hwloc_mask()) != list) std::abort();
    }
    if (auto mask = Cpuset::parse_hwloc_mask(text)) {
        if (Cpuset::parse_hwloc_mask(mask->to_hwloc_mask()) != mask) std::abort();
        Cpuset other = *mask;
        other ^= *mask;
        if (!other.empty()) std::abort();
    }
    return 0;
}
