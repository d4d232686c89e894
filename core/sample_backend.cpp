#include "core/sample_backend.hpp"

#include <array>

namespace stacksage {

namespace {

constexpr std::array<std::string_view, kSampleBackendCount> kWords = {"pebs", "ibs", "pagefault", "cpuclock", "papi"};

}  // namespace

std::string_view to_string(SampleBackend backend) { return kWords[static_cast<std::size_t>(backend)]; }

std::optional<SampleBackend> sample_backend_from_string(std::string_view word) {
    for (std::size_t i = 0; i < kWords.size(); ++i)
        if (kWords[i] == word) return static_cast<SampleBackend>(i);
    return std::nullopt;
}

}  // namespace stacksage
