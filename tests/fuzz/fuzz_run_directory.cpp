// A whole run directory through the run loader (load_run): run.json, event
// logs on two hosts (two images of one process among them), a sampling
// summary and topology files. The input is split into those files as
// tests/fuzz/run_split.hpp describes ("%%N" marker lines), written into a
// fixed per-process directory under /tmp (emptied for each input) and
// loaded. n01 gets a small real topology (tests/data/hwloc-xml/emmett.xml)
// unless the input gives one; n02 has none unless the input gives one.
//
// Checked, beyond "no crash, no hang, no leak":
//  - the run loads exactly when it holds an event log, and an error names
//    the directory;
//  - a loaded run is self-consistent: the model passes check_consistency,
//    its Process and Flow components are the ones the stats count, one Node
//    per host, every log counted once and every skipped one named by an
//    error note, and notes name files (or host directories) of the run
//    relative to it.
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "parsers/run_loader.hpp"
#include "tests/fuzz/fuzz_support.hpp"
#include "tests/fuzz/run_split.hpp"

using namespace stacksage;

namespace {

const std::string& fixed_topology() {
    static const std::string text = [] {
        std::ifstream in(std::string(STACKSAGE_TEST_DATA_DIR) + "/hwloc-xml/emmett.xml", std::ios::binary);
        std::string t{std::istreambuf_iterator<char>(in), {}};
        if (t.empty()) std::abort();  // the fuzz build needs tests/data
        return t;
    }();
    return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::array<std::string, 8> files;
    std::array<bool, 8> present;
    fuzz::split_run(std::string_view(reinterpret_cast<const char*>(data), size), files, present);

    fuzz::clear_scratch_dir();
    const std::filesystem::path out = fuzz::scratch_dir() / "run";
    std::size_t logs = 0;
    bool n01 = false, n02 = false;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (!present[i]) continue;
        fuzz::write_file(out / fuzz::kRunFiles[i], files[i]);
        if (fuzz::is_log(static_cast<int>(i))) {
            ++logs;
            (fuzz::kRunFiles[i].starts_with("n01/") ? n01 : n02) = true;
        }
    }
    if (n01 && !present[5]) fuzz::write_file(out / fuzz::kRunFiles[5], fixed_topology());
    std::filesystem::create_directories(out);

    RunLoadOptions options;
    options.parse_threads = 2;  // the loader's parallel parse, as on any multi-core node
    Result<LoadedRun> run = load_run(out.string(), options);
    if (!run) {
        if (logs > 0 || !fuzz::names(run.error().message, out.string())) std::abort();
        return 0;
    }
    if (logs == 0) std::abort();
    const LoadedRun& r = *run;
    const Model& m = r.model;
    if (!m.check_consistency().empty()) std::abort();
    if (r.stats.logs != logs || r.stats.logs_skipped > logs) std::abort();
    const std::size_t hosts = (n01 || present[5] ? 1 : 0) + (n02 || present[6] ? 1 : 0);
    if (r.stats.hosts != hosts) std::abort();
    if (m.count_of_type(ComponentType::Node) != hosts || m.children(r.topology).size() != hosts) std::abort();
    if (m.count_of_type(ComponentType::Process) != r.stats.processes) std::abort();
    if (m.count_of_type(ComponentType::Flow) != r.stats.flows) std::abort();
    if (r.stats.processes > logs - r.stats.logs_skipped) std::abort();
    std::size_t errors = 0;
    for (const LoadNote& n : r.notes) {
        if (n.message.empty()) std::abort();
        if (n.level == LoadNote::Level::Error) ++errors;
        if (n.file.empty()) continue;
        // Relative to the run: one of its files, or a host's directory for a
        // note about the host as a whole (masks its topology does not list).
        bool known = n.file == "n01" || n.file == "n02";
        for (std::string_view f : fuzz::kRunFiles) known = known || n.file == f;
        if (!known) std::abort();
    }
    if (errors < r.stats.logs_skipped) std::abort();
    return 0;
}
