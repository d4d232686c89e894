#include "parsers/slurm_topology_conf.hpp"

#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/hostlist.hpp"
#include "parsers/fabric_text.hpp"

namespace stacksage {

namespace {
using namespace fabric_text;

bool iequals_prefix(std::string_view s, std::string_view prefix) {
    if (s.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
            return false;
    return true;
}

// The most nodes and switches a file may name (a host list like
// n[0-999999] must not take the memory).
constexpr std::size_t kMaxMembers = 1'000'000;
}  // namespace

bool looks_like_slurm_topology_conf(std::string_view text) {
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        line = trim(line);
        if (line.empty() || line.starts_with("#")) continue;
        return iequals_prefix(line, "SwitchName=");
    }
    return false;
}

Status read_slurm_topology_conf(std::string_view text, std::string_view name, Fabric& fabric) {
    Lines lines(text);
    std::string_view line;
    std::unordered_map<std::string, std::uint32_t> switches;
    std::unordered_map<std::string, std::uint32_t> nodes;
    std::unordered_map<std::uint32_t, std::uint16_t> next_port;
    // Switches= may name a switch defined further down: cabled at the end.
    std::vector<std::pair<std::uint32_t, std::vector<std::string>>> pending;
    std::vector<std::uint32_t> pending_line;
    std::size_t members = 0;
    std::uint64_t next_guid = 1;
    auto port_of = [&](std::uint32_t node) {
        std::uint16_t& p = next_port[node];
        if (p < 0xfffe) ++p;
        return p;
    };
    auto switch_named = [&](std::string_view s, std::uint32_t line_number) {
        auto [it, added] = switches.emplace(std::string(s), 0);
        if (added) it->second = fabric.add_node(FabricNodeKind::Switch, next_guid++, s, line_number);
        return it->second;
    };
    while (lines.next(line)) {
        const std::string_view whole = line;
        if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        std::string_view switch_name, node_list, switch_list;
        while (!line.empty()) {
            const std::string_view word = next_word(line);
            const std::size_t eq = word.find('=');
            if (eq == std::string_view::npos)
                return line_error(name, lines.number(), "expected Key=Value words (SwitchName=, Nodes=, Switches=)",
                                  whole);
            const std::string_view key = word.substr(0, eq), value = word.substr(eq + 1);
            if (iequals_prefix(key, "SwitchName") && key.size() == 10) switch_name = value;
            else if (iequals_prefix(key, "Nodes") && key.size() == 5) node_list = value;
            else if (iequals_prefix(key, "Switches") && key.size() == 8) switch_list = value;
            // LinkSpeed= and keys of later Slurm versions carry nothing the tree needs.
        }
        if (switch_name.empty())
            return line_error(name, lines.number(), "a line without SwitchName=: each line describes one switch",
                              whole);
        if (switches.contains(std::string(switch_name)) &&
            fabric.nodes()[switches[std::string(switch_name)]].line != 0)
            return line_error(name, lines.number(), "switch " + std::string(switch_name) + " is described twice",
                              whole);
        const std::uint32_t s = switch_named(switch_name, lines.number());
        fabric.nodes()[s].line = lines.number();
        if (!node_list.empty()) {
            Result<std::vector<std::string>> hosts = parse_hostlist(node_list, kMaxMembers - members);
            if (!hosts) return line_error(name, lines.number(), "Nodes=: " + hosts.error().message, whole);
            members += hosts->size();
            for (const std::string& h : *hosts) {
                auto [it, added] = nodes.emplace(h, 0);
                if (!added)
                    return line_error(name, lines.number(), "node " + h + " hangs from two switches", whole);
                it->second = fabric.add_node(FabricNodeKind::Adapter, next_guid++, h, lines.number());
                fabric.add_link(s, port_of(s), it->second, 1, 0, "");
            }
        }
        if (!switch_list.empty()) {
            Result<std::vector<std::string>> below = parse_hostlist(switch_list, kMaxMembers - members);
            if (!below) return line_error(name, lines.number(), "Switches=: " + below.error().message, whole);
            members += below->size();
            pending.emplace_back(s, std::move(*below));
            pending_line.push_back(lines.number());
        }
        if (node_list.empty() && switch_list.empty())
            return line_error(name, lines.number(), "switch " + std::string(switch_name) +
                                                        " has neither Nodes= nor Switches=", whole);
    }
    for (std::size_t i = 0; i < pending.size(); ++i)
        for (const std::string& child : pending[i].second) {
            auto it = switches.find(child);
            if (it == switches.end())
                return line_error(name, pending_line[i], "Switches= names " + child + ", which no line describes");
            if (it->second == pending[i].first)
                return line_error(name, pending_line[i], "switch " + child + " is below itself");
            if (!fabric.add_link(pending[i].first, port_of(pending[i].first), it->second, 0, 0, ""))
                return line_error(name, pending_line[i], "switch " + child + " hangs below two switches");
        }
    return Ok{};
}

}  // namespace stacksage
