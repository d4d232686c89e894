// What took a sample: the words MemoryAccess and RanOn paths carry
// (memory_access_keys::backend in run_model_schema.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stacksage {

// In the order reports list them.
enum class SampleBackend : std::uint8_t {
    Pebs,       // Intel's precise memory sampling
    Ibs,        // AMD's instruction-based sampling
    Pagefault,  // first touch of a page
    Cpuclock,   // where threads ran (cpu-clock timer)
    Papi,       // PAPI cache-miss counts
};
inline constexpr std::size_t kSampleBackendCount = 5;

// "pebs", "ibs", "pagefault", "cpuclock", "papi".
std::string_view to_string(SampleBackend backend);
// \return the backend whose word is `word`; nullopt for any other word.
std::optional<SampleBackend> sample_backend_from_string(std::string_view word);

}  // namespace stacksage
