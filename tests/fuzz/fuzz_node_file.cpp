// The node file reader (parsers/node_file_reader.hpp) on arbitrary bytes,
// and every stream of an event file through the event-log interpreter, as
// the run loader reads a host: OUT/<host>/node.events, node.samples and
// node.models are written by every process of a node at once, and a killed
// process, a full disk or a damaged copy leaves any bytes there.
//
//   first byte: the kind the file is read as (events, samples, models);
//   the rest:   the file.
//
// Checked, beyond "no crash, no hang, no leak, no read outside the file": a
// file gives its streams or an error naming it; streams come once each, in
// increasing stream order, none numbered 0; a stream's text is at most the
// file's bytes plus one NUL for each gap in its chain of regions; the regions stepped over are at
// most one per 64-byte boundary; a stream of an event file reads as a
// process image or gives an error naming the stream, and a stream whose end
// was not recorded that has no end event is taken for a killed process.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/formats/node_file_format.hpp"
#include "parsers/node_file_reader.hpp"
#include "parsers/process_log.hpp"
#include "parsers/run_directory.hpp"
#include "tests/fuzz/fuzz_support.hpp"

using namespace stacksage;
namespace nf = formats::node_file;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const nf::FileKind kinds[] = {nf::FileKind::events, nf::FileKind::samples, nf::FileKind::models};
    const nf::FileKind kind = kinds[data[0] % 3];
    const std::string label = "n01/node.events";
    std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
    Result<NodeFile> file = parse_node_file(bytes, label, kind);
    if (!file) {
        if (file.error().message.rfind(label + ": ", 0) != 0) std::abort();
        return 0;
    }
    if (file->kind != kind || file->bytes != bytes) std::abort();
    if (file->damaged_regions > bytes.size() / nf::kRegionAlign + 1) std::abort();
    std::uint64_t previous = 0;
    for (const NodeStream& s : file->streams) {
        if (s.stream == 0 || s.stream <= previous) std::abort();
        previous = s.stream;
        if (s.regions == 0) std::abort();
        if (s.text.size() > bytes.size() + s.missing_regions) std::abort();
        if (kind != nf::FileKind::events) continue;
        const std::string name = node_stream_label(label, s.stream);
        Result<ProcessImage> image = parse_process_log(s.text, name, s.ended);
        if (!image) {
            if (!fuzz::names(image.error().message, name)) std::abort();
            continue;
        }
        if (!s.ended && !image->end_known && image->log_ends_early != "killed" &&
            image->log_ends_early != "log-stopped")
            std::abort();
    }
    return 0;
}
