// libstacksage-model.so: builds the process's model from its event log at
// exit and writes it next to the log. Loaded by the preload with
// dlopen(RTLD_LOCAL) only then (see process_model_hook.cpp).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>

#include "core/formats/run_layout.hpp"
#include "core/model_json.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/node_topology_cache.hpp"
#include "parsers/run_directory.hpp"
#include "preload/model_writer_api.h"
#include "preload/process_model_builder.hpp"

namespace {

namespace fs = std::filesystem;
using namespace stacksage;

void set_error(char* error, size_t cap, const std::string& message) {
    if (cap == 0) return;
    std::size_t n = std::min(cap - 1, message.size());
    std::memcpy(error, message.data(), n);
    error[n] = '\0';
}

// Writes text to dir/name without following or replacing anything: a
// private temporary name, then link(2), which fails if the name exists.
std::string publish(const fs::path& dir, const std::string& name, const std::string& text) {
    const fs::path temp = dir / (name + ".tmp." + std::to_string(::getpid()));
    int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return temp.string() + ": " + std::strerror(errno);
    const char* p = text.data();
    std::size_t left = text.size();
    std::string failure;
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            failure = temp.string() + ": " + std::strerror(errno);
            break;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    if (failure.empty() && ::link(temp.c_str(), (dir / name).c_str()) != 0)
        failure = (dir / name).string() + ": " + std::strerror(errno);
    ::unlink(temp.c_str());
    return failure;
}

// Reads the whole file at path into text; "" when it was read, else why
// not. The log is read back by its name, which someone may have given to a
// FIFO or a link meanwhile (OUT may be a shared /tmp): opened non-blocking
// and without following a link, and only a regular file read.
std::string read_log(const fs::path& path, std::string& text) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return path.string() + ": cannot be read: " + std::strerror(errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return path.string() + ": not a regular file";
    }
    text.clear();
    text.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            ::close(fd);
            return path.string() + ": cannot be read: " + std::strerror(err);
        }
        if (n == 0) break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return {};
}

int write_model(const char* host_dir, const char* log_name, char* error, size_t error_cap) {
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
    // trailing NULs of the log's last chunk (it is truncated only after
    // this) and torn lines of threads still writing are skipped there.
    const fs::path log = dir / log_name;
    std::string log_text;
    if (std::string failure = read_log(log, log_text); !failure.empty()) {
        set_error(error, error_cap, failure);
        return 1;
    }
    Result<ProcessImage> image = parse_process_log(log_text, log.string());
    if (!image) {
        set_error(error, error_cap, image.error().message);
        return 1;
    }
    preload::add_process_model(model, nodes.front(), *image);
    const std::string text =
        model_to_json(model).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    if (std::string failure = publish(dir, model_file_of(log_name), text); !failure.empty()) {
        set_error(error, error_cap, failure);
        return 1;
    }
    set_error(error, error_cap, note);
    return 0;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int stacksage_write_process_model(
    const char* host_dir, const char* log_name, char* error, size_t error_cap) {
    // Nothing may escape into the application's exit path.
    try {
        return write_model(host_dir, log_name, error, error_cap);
    } catch (const std::exception& e) {
        set_error(error, error_cap, e.what());
    } catch (...) {
        set_error(error, error_cap, "unexpected error");
    }
    return 1;
}
