// hwloc XML into the model: any bytes give a consistent model or an Error.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/model_json.hpp"
#include "parsers/hwloc_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    for (bool io : {false, true}) {
        stacksage::HwlocLoadOptions options;
        options.include_io = io;
        auto model = stacksage::load_hwloc_xml_text(text, "fuzz.xml", options);
        if (!model) {
            if (model.error().message.find("fuzz.xml") == std::string::npos) std::abort();  // must name the file
            continue;
        }
        if (!model->check_consistency().empty()) std::abort();
        (void)stacksage::model_to_json(*model);
    }
    return 0;
}
