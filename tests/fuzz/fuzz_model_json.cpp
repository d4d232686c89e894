// The model's JSON reader: any document gives an Error or a model that
// writes back to the same document it reads as.
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/model_json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    auto doc = nlohmann::json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return 0;
    auto model = stacksage::model_from_json(doc);
    if (!model) return 0;
    if (!model->check_consistency().empty()) std::abort();
    auto once = stacksage::model_to_json(*model);
    auto again = stacksage::model_from_json(once);
    if (!again || stacksage::model_to_json(*again) != once) std::abort();
    return 0;
}
