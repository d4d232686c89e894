// The event lines a run directory's recorder wrote, read back through the
// node files' reader (parsers/node_file_reader.hpp): every stream of every
// OUT/<host>/node*.events, for the system tests that look at what the
// recorder wrote rather than at the report. Tests using it link
// stacksage_parsers.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parsers/node_file_reader.hpp"

namespace stacksage::testing {

// Every line of every event stream under out/<host>/ that parses as JSON
// (lines torn by a kill, and a killed stream's NUL tail, are left out), in
// host, file and stream order. Host directories without a node file hold
// nothing for this. A node file that cannot be read fails the test.
inline std::vector<nlohmann::json> recorded_events(const std::filesystem::path& out) {
    namespace fs = std::filesystem;
    std::vector<nlohmann::json> events;
    std::vector<fs::path> files;
    for (const auto& host : fs::directory_iterator(out)) {
        if (!host.is_directory()) continue;
        for (const auto& f : fs::directory_iterator(host.path())) {
            const std::string name = f.path().filename().string();
            if (name.starts_with("node") && name.ends_with(".events")) files.push_back(f.path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
        auto node = read_node_file(file.string(), file.filename().string(), formats::node_file::FileKind::events);
        EXPECT_TRUE(node) << node.error().message;
        if (!node) continue;
        for (const NodeStream& stream : node->streams) {
            std::string_view text = stream.text;
            while (!text.empty()) {
                const std::size_t end = text.find('\n');
                const std::string_view line = text.substr(0, end);
                text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
                if (line.find('\0') != std::string_view::npos) continue;
                auto j = nlohmann::json::parse(line, nullptr, false);
                if (!j.is_discarded()) events.push_back(std::move(j));
            }
        }
    }
    return events;
}

}  // namespace stacksage::testing
