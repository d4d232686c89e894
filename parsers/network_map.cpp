#include "parsers/network_map.hpp"

#include "core/fabric.hpp"
#include "parsers/fabric_text.hpp"
#include "parsers/input_file.hpp"

namespace stacksage {

Result<std::vector<NetworkMapEntry>> parse_network_map(std::string_view text, std::string_view name) {
    using namespace fabric_text;
    std::vector<NetworkMapEntry> entries;
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        const std::string_view whole = line;
        if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        const std::string_view guid_word = next_word(line);
        const std::string_view host = next_word(line);
        const auto guid = parse_guid(guid_word);
        if (!guid || host.empty() || !trim(line).empty())
            return line_error(name, lines.number(), "expected \"<GUID> <hostname>\", as \"0x0002c903000b2f73 node001\"",
                              whole);
        entries.push_back(NetworkMapEntry{*guid, std::string(host)});
    }
    return entries;
}

Result<std::vector<NetworkMapEntry>> load_network_map(const std::string& path) {
    std::string text;
    if (auto problem = read_input_file(path, 64 * input_limits::kMiB, "a network map file", text))
        return make_error(path + ": " + problem->reason);
    return parse_network_map(text, path);
}

}  // namespace stacksage
