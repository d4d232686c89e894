// Writes seed corpora for the fuzz targets from the real topologies:
//   fuzz_make_seeds TEST_DATA_DIR OUT_DIR
// OUT_DIR/fuzz_model_json/<file>.json and OUT_DIR/fuzz_snapshot/<file>.snap.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/model_json.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: fuzz_make_seeds TEST_DATA_DIR OUT_DIR\n");
        return 2;
    }
    fs::path out = argv[2];
    fs::create_directories(out / "fuzz_model_json");
    fs::create_directories(out / "fuzz_snapshot");
    int written = 0;
    for (auto& e : fs::directory_iterator(fs::path(argv[1]) / "hwloc-xml")) {
        if (e.path().extension() != ".xml") continue;
        auto model = stacksage::load_hwloc_xml(e.path().string());
        if (!model) continue;
        std::ofstream(out / "fuzz_model_json" / (e.path().stem().string() + ".json"))
            << stacksage::model_to_json(*model).dump();
        std::ofstream(out / "fuzz_snapshot" / (e.path().stem().string() + ".snap"), std::ios::binary)
            << stacksage::snapshot_bytes(*model);
        ++written;
    }
    std::printf("%d seed models written\n", written);
    return written > 0 ? 0 : 1;
}
