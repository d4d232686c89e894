#include "parsers/ibroute.hpp"

#include "parsers/fabric_text.hpp"

namespace stacksage {

namespace {
using namespace fabric_text;
constexpr std::string_view kHeader = "Unicast lids";
}  // namespace

bool looks_like_ibroute(std::string_view text) {
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        line = trim(line);
        if (line.empty()) continue;
        return line.starts_with(kHeader);
    }
    return false;
}

Status read_ibroute(std::string_view text, std::string_view name, std::string_view subnet, Fabric& fabric,
                    std::vector<std::string>& notes) {
    Lines lines(text);
    std::string_view line;
    std::uint32_t switch_node = kNoFabricNode;
    bool header_seen = false;
    ForwardingTable table;
    bool cut_short = false;
    while (lines.next(line)) {
        const std::string_view whole = line;
        line = trim(line);
        if (line.empty()) continue;
        if (!header_seen) {
            if (!line.starts_with(kHeader))
                return line_error(name, lines.number(),
                                  "expected \"Unicast lids [...] of switch Lid <n> guid 0x<guid> (...):\", the first "
                                  "line ibroute prints",
                                  whole);
            header_seen = true;
            std::string_view rest = line;
            const std::size_t lid_at = rest.find(" Lid ");
            const std::size_t guid_at = rest.find(" guid ");
            if (lid_at == std::string_view::npos || guid_at == std::string_view::npos)
                return line_error(name, lines.number(), "the header names no switch \"Lid <n> guid 0x<guid>\"", whole);
            std::string_view after_lid = rest.substr(lid_at + 5);
            std::string_view after_guid = rest.substr(guid_at + 6);
            const auto lid = parse_number(next_word(after_lid), kMaxLid);
            const auto guid = parse_guid(next_word(after_guid));
            if (!lid || !guid) return line_error(name, lines.number(), "the switch's LID or GUID is not a number", whole);
            switch_node = fabric.find_lid(subnet, static_cast<std::uint32_t>(*lid));
            if (switch_node == kNoFabricNode || fabric.nodes()[switch_node].kind != FabricNodeKind::Switch)
                switch_node = fabric.find_guid(*guid);
            if (switch_node == kNoFabricNode || fabric.nodes()[switch_node].kind != FabricNodeKind::Switch) {
                notes.push_back(std::string(name) + ": the switch of LID " + std::to_string(*lid) +
                                " is not in the fabric read; its forwarding table is left out");
                return Ok{};
            }
            continue;
        }
        if (line.starts_with("Lid") || line.starts_with("Port")) continue;  // the column titles
        if (line.find("iberror") != std::string_view::npos) {
            cut_short = true;
            break;
        }
        if (line.ends_with("valid lids dumped")) break;
        std::string_view rest = line;
        const auto lid = parse_number(next_word(rest), kMaxLid);
        const auto port = parse_number(next_word(rest), kMaxPort);
        if (!lid || !port)
            return line_error(name, lines.number(), "expected \"0x<lid> <port> : ...\", a forwarding table entry",
                              whole);
        if (table.out_port.size() <= *lid) table.out_port.resize(*lid + 1, ForwardingTable::kNoRoute);
        // A LID listed twice keeps its first port.
        if (table.out_port[*lid] == ForwardingTable::kNoRoute)
            table.out_port[*lid] = static_cast<std::uint16_t>(*port);
    }
    if (!header_seen) return line_error(name, 1, "the file is empty, not an ibroute table");
    if (cut_short)
        notes.push_back(std::string(name) + ": ibroute failed part way (" + std::to_string(lines.number()) +
                        " lines read); routes through this switch to the LIDs it did not dump are unknown");
    fabric.set_forwarding_table(switch_node, std::move(table));
    return Ok{};
}

}  // namespace stacksage
