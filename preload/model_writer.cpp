// libstacksage-model.so: builds the process's model from its event stream
// at exit, with the analyzer's builder (parsers/process_model_builder.hpp),
// and writes it into the node's node.models. Loaded by the preload with
// dlopen(RTLD_LOCAL) only then (see process_model_hook.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "core/formats/run_layout.hpp"
#include "core/model_json.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/node_topology_cache.hpp"
#include "parsers/node_file_reader.hpp"
#include "parsers/process_model_builder.hpp"
#include "parsers/run_directory.hpp"
#include "preload/node_file.hpp"
#include "preload/model_writer_api.h"

namespace {

namespace fs = std::filesystem;
using namespace stacksage;

void set_error(char* error, size_t cap, const std::string& message) {
    if (cap == 0) return;
    std::size_t n = std::min(cap - 1, message.size());
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
}

// The process's model as a stream of the node's node.models, linked to its
// event stream (preload/node_file.hpp: the same publishing and hostile-name
// rules as the event file).
std::string publish(const fs::path& dir, std::int64_t pid, std::int64_t rank, std::uint64_t event_stream,
                    const std::string& text) {
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir_fd < 0) return dir.string() + ": " + std::strerror(errno);
    preload::NodeFile models;
    long rc = models.open(dir_fd, formats::node_file::FileKind::models, dir.filename().c_str());
    ::close(dir_fd);
    if (rc == 0) rc = preload::write_whole_stream(models, pid, rank, event_stream, text.data(), text.size());
    models.close();
    if (rc < 0) return (dir / "node.models").string() + ": " + std::strerror(static_cast<int>(-rc));
    return {};
}

int write_model(const char* host_dir, const char* log_name, std::uint64_t stream, const std::uint64_t* region_offsets,
                std::size_t regions, std::int64_t pid, std::int64_t rank, char* error, size_t error_cap) {
    const fs::path dir(host_dir);
    const fs::path topology = dir / formats::run_layout::kTopologyXml;
    // The first process of the node to get here converts the node's topology
    // and publishes it as a snapshot; every other one maps it (and so does
    // the analyzer), instead of each parsing the XML again.
    Result<NodeTopology> loaded = load_or_publish_node_topology((dir / formats::run_layout::kTopologySnapshot).string(), [&] {
        std::error_code ec;
        return fs::exists(topology, ec) ? load_hwloc_xml(topology.string()) : discover_this_machine();
    });
    if (!loaded) {
        set_error(error, error_cap, "topology: " + loaded.error().message);
        return 1;
    }
    const std::string note = loaded->note;
    Model model = std::move(loaded->model);
    std::vector<ComponentId> nodes = model.components_of_type(ComponentType::Node);
    if (nodes.empty()) {
        set_error(error, error_cap, "topology: no machine in " + topology.string());
        return 1;
    }
    // The log read as the analyzer reads it (parsers/process_log.hpp): the
    // trailing NULs of the stream's last region (its length is recorded only
    // after this) and torn lines of threads still writing are skipped there.
    // Only this stream's regions are read (a node of thousands of
    // processes costs each of them its own bytes, not the whole file), by
    // the file's name, which someone may have given to a FIFO or a link
    // meanwhile (OUT may be a shared /tmp): read_node_stream reads only a
    // regular file, non-blocking, and only regions that name this stream.
    const fs::path log = dir / log_name;
    Result<std::string> own = read_node_stream(log.string(), log.string(), stream, region_offsets, regions);
    if (!own) {
        set_error(error, error_cap, own.error().message);
        return 1;
    }
    // Named as the analyzer names the stream ("<host>/node.events#N"), so
    // that the process's log attribute is the analyzer's too.
    const std::string host = dir.filename().string();
    std::vector<ProcessImage> images;
    Result<ProcessImage> image = parse_process_log(*own, node_stream_label(host + "/" + log_name, stream));
    if (!image) {
        set_error(error, error_cap, image.error().message);
        return 1;
    }
    image->stream = stream;
    images.push_back(std::move(*image));
    // The analyzer's builder: this model is the analyzer's of this image.
    ProcessModelBuilder(model, nodes.front()).add_process(host, images);
    const std::string text =
        model_to_json(model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (std::string failure = publish(dir, pid, rank, stream, text); !failure.empty()) {
        set_error(error, error_cap, failure);
        return 1;
    }
    set_error(error, error_cap, note);
    return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int stacksage_write_process_model_v3(
    const char* host_dir, const char* log_name, uint64_t stream, const uint64_t* region_offsets, size_t regions,
    int64_t pid, int64_t rank, char* error, size_t error_cap) {
    // Nothing may escape into the application's exit path.
    try {
        return write_model(host_dir, log_name, stream, region_offsets, regions, pid, rank, error, error_cap);
    } catch (const std::exception& e) {
        set_error(error, error_cap, e.what());
    } catch (...) {
        set_error(error, error_cap, "unexpected error");
    }
    return 1;
}
