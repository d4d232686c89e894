#include "parsers/ibnetdiscover_ports.hpp"

#include "parsers/fabric_text.hpp"

namespace stacksage {

namespace {
using namespace fabric_text;

std::optional<FabricNodeKind> kind_of(std::string_view word) {
    if (word == "SW") return FabricNodeKind::Switch;
    if (word == "CA") return FabricNodeKind::Adapter;
    if (word == "RT") return FabricNodeKind::Router;
    return std::nullopt;
}

struct PortEnd {
    FabricNodeKind kind;
    std::uint32_t lid;
    std::uint16_t port;
    std::uint64_t guid;
};

// "CA 137 1 0x78e7..." -> the end; the words are removed from s.
std::optional<PortEnd> read_end(std::string_view& s, std::string& why) {
    const std::string_view type = next_word(s);
    const auto kind = kind_of(type);
    if (!kind) {
        why = "expected a port type CA, SW or RT, found \"" + std::string(type) + "\"";
        return std::nullopt;
    }
    const auto lid = parse_number(next_word(s), kMaxLid);
    const auto port = parse_number(next_word(s), kMaxPort);
    const std::string_view guid_word = next_word(s);
    const auto guid = guid_word.starts_with("0x") ? parse_guid(guid_word) : std::nullopt;
    if (!lid || !port || !guid) {
        why = "expected a LID, a port number (0-255) and a 0x-prefixed GUID after the port type";
        return std::nullopt;
    }
    return PortEnd{*kind, static_cast<std::uint32_t>(*lid), static_cast<std::uint16_t>(*port), *guid};
}

std::uint32_t declare(Fabric& fabric, const PortEnd& end, std::string_view description, std::string_view subnet,
                      std::uint32_t line) {
    const std::uint32_t n = fabric.add_node(end.kind, end.guid, description, line);
    FabricNode& node = fabric.nodes()[n];
    if (node.subnet.empty()) node.subnet = subnet;
    if (end.kind == FabricNodeKind::Switch) {
        if (node.lid == 0 && end.lid != 0) {
            node.lid = end.lid;
            fabric.index_lid(n, end.lid);
        }
    } else {
        fabric.add_port_guid(n, end.guid, end.lid);
    }
    return n;
}
}  // namespace

bool looks_like_ibnetdiscover_ports(std::string_view text) {
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        line = trim(line);
        if (line.empty() || line.starts_with("DR path") || line.starts_with("#")) continue;
        const std::string_view type = next_word(line);
        return kind_of(type).has_value() && parse_number(next_word(line), kMaxLid).has_value();
    }
    return false;
}

Status read_ibnetdiscover_ports(std::string_view text, std::string_view name, std::string_view subnet,
                                Fabric& fabric) {
    Lines lines(text);
    std::string_view line;
    while (lines.next(line)) {
        const std::string_view whole = line;
        line = trim(line);
        // ibnetdiscover -s prints its discovery progress on the same stream.
        if (line.empty() || line.starts_with("DR path") || line.starts_with("#")) continue;
        std::string why;
        auto local = read_end(line, why);
        if (!local) return line_error(name, lines.number(), why, whole);
        const std::string_view width_word = next_word(line);
        const auto width = parse_width(width_word);
        if (!width) return line_error(name, lines.number(), "expected the link width (\"4x\") after the GUID", whole);
        std::string_view rest = trim(line);
        // The speed, or "???" for a port that is down.
        std::string_view speed;
        if (!rest.starts_with("'")) speed = next_word(rest);
        rest = trim(rest);
        if (rest.starts_with("- ")) {
            rest.remove_prefix(2);
            auto peer = read_end(rest, why);
            if (!peer) return line_error(name, lines.number(), "the peer: " + why, whole);
            // ( 'desc' - 'peer desc' )
            rest = trim(rest);
            if (!rest.starts_with("(") || !rest.ends_with(")"))
                return line_error(name, lines.number(),
                                  "expected the node descriptions in parentheses after the peer, ( 'a' - 'b' )",
                                  whole);
            rest = trim(rest.substr(1, rest.size() - 2));
            const std::size_t split = rest.rfind("' - '");
            if (rest.size() < 2 || rest.front() != '\'' || rest.back() != '\'' || split == std::string_view::npos)
                return line_error(name, lines.number(), "expected two quoted node descriptions, ( 'a' - 'b' )", whole);
            const std::string_view own_desc = rest.substr(1, split - 1);
            const std::string_view peer_desc = rest.substr(split + 5, rest.size() - split - 6);
            const std::uint32_t a = declare(fabric, *local, own_desc, subnet, lines.number());
            const std::uint32_t b = declare(fabric, *peer, peer_desc, subnet, lines.number());
            if (a == b && local->port == peer->port)
                return line_error(name, lines.number(), "a port cabled to itself", whole);
            if (!fabric.add_link(a, local->port, b, peer->port, *width, speed == "???" ? "" : speed))
                return line_error(name, lines.number(),
                                  "this port is already cabled elsewhere in the report (a port has one cable)", whole);
        } else {
            // A port with no peer: its node and description only.
            std::string_view desc = rest;
            if (desc.size() >= 2 && desc.front() == '\'' && desc.back() == '\'') desc = desc.substr(1, desc.size() - 2);
            else if (!desc.empty())
                return line_error(name, lines.number(), "expected \"- <peer>\" or the quoted node description", whole);
            declare(fabric, *local, desc, subnet, lines.number());
        }
    }
    return Ok{};
}

}  // namespace stacksage
