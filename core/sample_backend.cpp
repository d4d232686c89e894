#include "core/sample_backend.hpp"

#include <array>

#include "core/enum_words.hpp"

namespace stacksage {

namespace {

constexpr std::array<std::string_view, kSampleBackendCount> kWords = {"pebs", "ibs", "pagefault", "cpuclock", "papi"};

}  // namespace

std::string_view to_string(SampleBackend backend) { return word_of(kWords, backend); }

std::optional<SampleBackend> sample_backend_from_string(std::string_view word) {
    return enum_of_word<SampleBackend>(kWords, word);
}

}  // namespace stacksage
