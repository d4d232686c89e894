#include "parsers/ibnetdiscover_topology.hpp"

#include "parsers/fabric_text.hpp"

namespace stacksage {

namespace {
using namespace fabric_text;

// "S-0008f10500108c9e" (quoted): the kind and GUID.
bool read_node_ref(std::string_view& s, FabricNodeKind& kind, std::uint64_t& guid) {
    s = trim(s);
    if (s.size() < 4 || s.front() != '"') return false;
    const std::size_t close = s.find('"', 1);
    if (close == std::string_view::npos) return false;
    std::string_view ref = s.substr(1, close - 1);
    s.remove_prefix(close + 1);
    if (ref.size() < 3 || ref[1] != '-') return false;
    switch (ref[0]) {
        case 'S': kind = FabricNodeKind::Switch; break;
        case 'H': kind = FabricNodeKind::Adapter; break;
        case 'R': kind = FabricNodeKind::Router; break;
        default: return false;
    }
    auto g = parse_guid(ref.substr(2));
    if (!g) return false;
    guid = *g;
    return true;
}

// "[14]" -> 14; "(78e7d1030024a7cd)" -> the GUID. Both optional-aware.
std::optional<std::uint16_t> read_bracket_port(std::string_view& s) {
    if (!s.starts_with("[")) return std::nullopt;
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    auto v = parse_number(s.substr(1, close - 1), kMaxPort);
    s.remove_prefix(close + 1);
    if (!v) return std::nullopt;
    return static_cast<std::uint16_t>(*v);
}
std::optional<std::uint64_t> read_paren_guid(std::string_view& s) {
    if (!s.starts_with("(")) return std::nullopt;
    const std::size_t close = s.find(')');
    if (close == std::string_view::npos) return std::nullopt;
    auto g = parse_guid(s.substr(1, close - 1));
    s.remove_prefix(close + 1);
    return g;
}

// After "lid": the number.
std::optional<std::uint32_t> read_lid_after(std::string_view s, std::string_view marker) {
    const std::size_t at = s.find(marker);
    if (at == std::string_view::npos) return std::nullopt;
    s.remove_prefix(at + marker.size());
    auto v = parse_number(next_word(s), kMaxLid);
    if (!v) return std::nullopt;
    return static_cast<std::uint32_t>(*v);
}

bool starts_with_word(std::string_view line, std::string_view word) {
    return line.starts_with(word) && (line.size() == word.size() || is_space(line[word.size()]));
}
}  // namespace

bool looks_like_ibnetdiscover_topology(std::string_view text) {
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        line = trim(line);
        if (line.empty() || line.starts_with("#")) continue;
        return line.starts_with("vendid=") || line.starts_with("devid=") || line.starts_with("sysimgguid=") ||
               line.starts_with("switchguid=") || line.starts_with("caguid=") || line.starts_with("routerguid=") ||
               starts_with_word(line, "Switch") || starts_with_word(line, "Ca") || starts_with_word(line, "Rt") ||
               line.starts_with("Chassis") || line.starts_with("Non-Chassis");
    }
    return false;
}

Status read_ibnetdiscover_topology(std::string_view text, std::string_view name, std::string_view subnet,
                                   Fabric& fabric) {
    Lines lines(text);
    std::string_view line;
    std::uint32_t current = kNoFabricNode;  // the node whose record the port lines belong to
    auto declare = [&](FabricNodeKind kind, std::uint64_t guid, std::string_view desc) {
        const std::uint32_t n = fabric.add_node(kind, guid, desc, lines.number());
        if (fabric.nodes()[n].subnet.empty()) fabric.nodes()[n].subnet = subnet;
        return n;
    };
    while (lines.next(line)) {
        const std::string_view whole = line;
        line = trim(line);
        if (line.empty()) {
            current = kNoFabricNode;
            continue;
        }
        if (line.starts_with("#") || line.starts_with("Chassis") || line.starts_with("Non-Chassis")) continue;
        // An id line is one word with '=' in it (node lines hold '=' only in quoted descriptions).
        if (const std::size_t eq = line.find('='); eq != std::string_view::npos && eq < line.find_first_of(" \t\"[")) {
            // vendid=, devid=, sysimgguid=, switchguid=, caguid=, routerguid=: the node line says it all.
            const std::string_view key = line.substr(0, line.find('='));
            if (key != "vendid" && key != "devid" && key != "sysimgguid" && key != "switchguid" && key != "caguid" &&
                key != "routerguid")
                return line_error(name, lines.number(), "unknown id line (expected vendid=, devid=, sysimgguid=, "
                                                        "switchguid=, caguid= or routerguid=)", whole);
            continue;
        }
        if (starts_with_word(line, "Switch") || starts_with_word(line, "Ca") || starts_with_word(line, "Rt")) {
            std::string_view rest = line;
            const std::string_view type = next_word(rest);
            if (!parse_number(next_word(rest), kMaxPort))
                return line_error(name, lines.number(), "expected the port count after \"" + std::string(type) + "\"",
                                  whole);
            FabricNodeKind kind{};
            std::uint64_t guid = 0;
            if (!read_node_ref(rest, kind, guid))
                return line_error(name, lines.number(), "expected the node's quoted \"S-<guid>\"/\"H-<guid>\" name",
                                  whole);
            const FabricNodeKind declared = type == "Switch" ? FabricNodeKind::Switch
                                            : type == "Ca"   ? FabricNodeKind::Adapter
                                                             : FabricNodeKind::Router;
            if (kind != declared)
                return line_error(name, lines.number(), "the node's name prefix does not match its type", whole);
            // # "description" [base|enhanced port 0 lid N lmc N]
            std::string_view desc;
            const std::size_t open = rest.find('"');
            const std::size_t close = rest.rfind('"');
            if (open != std::string_view::npos && close > open) desc = rest.substr(open + 1, close - open - 1);
            current = declare(kind, guid, desc);
            FabricNode& node = fabric.nodes()[current];
            if (!desc.empty()) node.description = desc;
            node.line = lines.number();
            if (kind == FabricNodeKind::Switch && close != std::string_view::npos) {
                if (auto lid = read_lid_after(rest.substr(close), " lid ")) {
                    node.lid = *lid;
                    fabric.index_lid(current, *lid);
                }
            }
            continue;
        }
        if (line.starts_with("[")) {
            if (current == kNoFabricNode)
                return line_error(name, lines.number(), "a port line outside a Switch/Ca/Rt record", whole);
            std::string_view rest = line;
            const auto port = read_bracket_port(rest);
            if (!port) return line_error(name, lines.number(), "expected \"[<port>]\" at the start", whole);
            const auto own_port_guid = read_paren_guid(rest);
            FabricNodeKind peer_kind{};
            std::uint64_t peer_guid = 0;
            if (!read_node_ref(rest, peer_kind, peer_guid))
                return line_error(name, lines.number(), "expected the peer's quoted \"S-<guid>\"/\"H-<guid>\" name",
                                  whole);
            const auto peer_port = read_bracket_port(rest);
            if (!peer_port) return line_error(name, lines.number(), "expected \"[<port>]\" after the peer", whole);
            const auto peer_port_guid = read_paren_guid(rest);
            // # [lid N lmc N] "peer description" lid N <width><speed>
            const std::size_t hash = rest.find('#');
            if (hash == std::string_view::npos)
                return line_error(name, lines.number(), "expected \"# ... \"<peer description>\" lid <n> <4xQDR>\"",
                                  whole);
            std::string_view comment = rest.substr(hash + 1);
            const std::size_t open = comment.find('"');
            const std::size_t close = comment.rfind('"');
            if (open == std::string_view::npos || close <= open)
                return line_error(name, lines.number(), "expected the peer's quoted description", whole);
            const std::string_view before = comment.substr(0, open);
            const std::string_view peer_desc = comment.substr(open + 1, close - open - 1);
            std::string_view after = comment.substr(close + 1);
            std::uint32_t peer_lid = 0;
            if (auto lid = read_lid_after(after, "lid ")) peer_lid = *lid;
            // The last word: "4xQDR" (width and speed together).
            std::string_view tail = trim(after), rate;
            while (!tail.empty()) rate = next_word(tail);
            std::uint8_t width = 0;
            std::string_view speed;
            if (const std::size_t x = rate.find('x'); x != std::string_view::npos) {
                if (auto w = parse_width(rate.substr(0, x + 1))) {
                    width = *w;
                    speed = rate.substr(x + 1);
                }
            }
            FabricNode& own = fabric.nodes()[current];
            if (own.kind != FabricNodeKind::Switch && own_port_guid) {
                std::uint32_t own_lid = 0;
                if (auto lid = read_lid_after(before, "lid ")) own_lid = *lid;
                fabric.add_port_guid(current, *own_port_guid, own_lid);
            }
            const std::uint32_t peer = declare(peer_kind, peer_guid, peer_desc);
            if (peer_kind == FabricNodeKind::Switch) {
                if (fabric.nodes()[peer].lid == 0 && peer_lid != 0) {
                    fabric.nodes()[peer].lid = peer_lid;
                    fabric.index_lid(peer, peer_lid);
                }
            } else if (peer_port_guid) {
                fabric.add_port_guid(peer, *peer_port_guid, peer_lid);
            }
            if (peer == current && *peer_port == *port)
                return line_error(name, lines.number(), "a port cabled to itself", whole);
            if (!fabric.add_link(current, *port, peer, *peer_port, width, speed))
                return line_error(name, lines.number(), "this port is already cabled elsewhere in the file", whole);
            continue;
        }
        return line_error(name, lines.number(),
                          "unexpected line (expected an id line, a Switch/Ca/Rt line, a [port] line or a blank line)",
                          whole);
    }
    return Ok{};
}

}  // namespace stacksage
