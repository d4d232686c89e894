#include "parsers/run_census.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/formats/event_schema.hpp"
#include "parsers/input_file.hpp"
#include "parsers/node_file_reader.hpp"
#include "parsers/run_directory.hpp"

namespace stacksage {

namespace fs = std::filesystem;

namespace {

// What the first line of a log (its process_start) says about the image.
struct ImageStart {
    bool readable = false;
    std::int64_t t = 0;
    std::int64_t rank = -1;
    bool launcher = false;
    std::string exe;  // base name
};

ImageStart image_start_of(std::string_view text) {
    ImageStart s;
    const std::string_view line = text.substr(0, text.find('\n'));
    if (line.empty()) return s;
    namespace start = event_schema::process_start;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value(event_schema::common::ev, "") != start::event) return s;
    s.readable = true;
    if (auto it = j.find(event_schema::common::t); it != j.end() && it->is_number_integer())
        s.t = it->get<std::int64_t>();
    if (auto it = j.find(start::rank); it != j.end() && it->is_number_integer()) s.rank = it->get<std::int64_t>();
    if (auto it = j.find(start::launcher); it != j.end() && it->is_string() && !it->get<std::string>().empty())
        s.launcher = true;
    if (auto it = j.find(start::exe); it != j.end() && it->is_string())
        s.exe = fs::path(it->get<std::string>()).filename().string();
    return s;
}

ImageStart read_image_start(const fs::path& path) {
    // The first line only, from a regular file only (input_file.hpp): the
    // recorder's process_start line is far shorter than this.
    constexpr std::uint64_t kFirstLineBytes = std::uint64_t{1} << 20;
    std::string text;
    if (read_input_prefix(path.string(), kFirstLineBytes, text)) return {};
    return image_start_of(text);
}

}  // namespace

Result<RunCensus> take_run_census(const std::string& out_dir) {
    RunCensus census;
    std::set<std::string> pre_exec_names;
    std::error_code ec;
    fs::directory_iterator hosts(out_dir, ec);
    if (ec) return make_error("'" + out_dir + "' cannot be read (" + ec.message() + ")");
    for (const fs::directory_entry& host : hosts) {
        if (!host.is_directory(ec)) continue;
        std::map<std::int64_t, std::vector<ImageStart>> by_pid;  // logs without a pid: one process each
        std::vector<ImageStart> unnamed;
        fs::directory_iterator files(host.path(), ec);
        if (ec) continue;
        for (const fs::directory_entry& f : files) {
            const std::string name = f.path().filename().string();
            if (is_node_file_name(name, formats::node_file::FileKind::events)) {
                // Each stream is one image's log.
                Result<NodeFile> node = read_node_file(f.path().string(), name, formats::node_file::FileKind::events);
                if (!node) {
                    ++census.unreadable;
                    ++census.logs;
                    continue;
                }
                for (const NodeStream& stream : node->streams) {
                    ImageStart image = image_start_of(stream.text);
                    if (image.rank < 0 && stream.rank >= 0 && !image.launcher) image.rank = stream.rank;
                    if (!image.readable) ++census.unreadable;
                    (stream.pid > 0 ? by_pid[stream.pid] : unnamed).push_back(image);
                    ++census.logs;
                }
                continue;
            }
            if (!is_event_log_name(name) || !f.is_regular_file(ec)) continue;
            const LogFileName parsed = parse_log_file_name(name);
            ImageStart image = read_image_start(f.path());
            if (image.rank < 0) image.rank = parsed.rank;
            if (!image.readable) ++census.unreadable;
            (parsed.pid >= 0 ? by_pid[parsed.pid] : unnamed).push_back(image);
            ++census.logs;
        }
        if (by_pid.empty() && unnamed.empty()) continue;
        ++census.hosts;
        const auto count_process = [&](std::vector<ImageStart>& images) {
            std::stable_sort(images.begin(), images.end(),
                             [](const ImageStart& a, const ImageStart& b) { return a.t < b.t; });
            census.pre_exec_images += images.size() - 1;
            for (std::size_t i = 0; i + 1 < images.size(); ++i)
                if (!images[i].exe.empty()) pre_exec_names.insert(images[i].exe);
            if (images.back().launcher) {
                ++census.launchers;
                return;
            }
            ++census.processes;
            // The rank of an image that was no launcher (the loader's rule):
            // mpirun's fork inherits the launcher's identity until it execs.
            std::int64_t rank = -1;
            for (const ImageStart& im : images)
                if (im.rank >= 0 && !im.launcher) rank = im.rank;
            if (rank >= 0) census.ranks.push_back(rank);
        };
        for (auto& [pid, images] : by_pid) count_process(images);
        for (ImageStart& image : unnamed) {
            std::vector<ImageStart> one{image};
            count_process(one);
        }
    }
    std::sort(census.ranks.begin(), census.ranks.end());
    census.pre_exec_names.assign(pre_exec_names.begin(), pre_exec_names.end());
    return census;
}

}  // namespace stacksage
