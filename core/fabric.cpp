#include "core/fabric.hpp"

#include <algorithm>

namespace stacksage {

std::string_view to_string(FabricNodeKind kind) {
    switch (kind) {
        case FabricNodeKind::Switch: return "switch";
        case FabricNodeKind::Adapter: return "adapter";
        case FabricNodeKind::Router: return "router";
    }
    return "unknown";
}

double lane_gbits(std::string_view speed) {
    // Signalling rate times line-code efficiency (8b/10b up to QDR, 64b/66b
    // for FDR and EDR, PAM4 with FEC above).
    if (speed == "SDR") return 2;
    if (speed == "DDR") return 4;
    if (speed == "QDR") return 8;
    if (speed == "FDR10") return 10;
    if (speed == "FDR") return 13.64;
    if (speed == "EDR") return 25;
    if (speed == "HDR") return 50;
    if (speed == "NDR") return 100;
    if (speed == "XDR") return 200;
    return 0;
}

std::uint32_t Fabric::add_node(FabricNodeKind kind, std::uint64_t guid, std::string_view description,
                               std::uint32_t line) {
    if (auto it = by_guid_.find(guid); it != by_guid_.end()) {
        FabricNode& known = nodes_[it->second];
        if (known.description.empty()) known.description = description;
        return it->second;
    }
    const auto index = static_cast<std::uint32_t>(nodes_.size());
    FabricNode n;
    n.kind = kind;
    n.guid = guid;
    n.description = description;
    n.line = line;
    nodes_.push_back(std::move(n));
    by_guid_.emplace(guid, index);
    return index;
}

void Fabric::add_port_guid(std::uint32_t node, std::uint64_t port_guid, std::uint32_t lid) {
    FabricNode& n = nodes_[node];
    if (std::find(n.port_guids.begin(), n.port_guids.end(), port_guid) == n.port_guids.end()) {
        n.port_guids.push_back(port_guid);
        n.port_lids.push_back(lid);
    }
    by_guid_.emplace(port_guid, node);
    if (n.lid == 0) n.lid = lid;
    index_lid(node, lid);
}

std::optional<std::uint64_t> Fabric::find_subnet(std::string_view subnet) const {
    for (std::size_t i = 0; i < subnets_.size(); ++i)
        if (subnets_[i] == subnet) return i;
    return std::nullopt;
}

void Fabric::index_lid(std::uint32_t node, std::uint32_t lid) {
    if (lid == 0) return;
    const std::string& subnet = nodes_[node].subnet;
    std::optional<std::uint64_t> s = find_subnet(subnet);
    if (!s) {
        s = subnets_.size();
        subnets_.push_back(subnet);
    }
    by_lid_.emplace(*s << 32 | lid, node);
}

std::uint32_t Fabric::find_lid(std::string_view subnet, std::uint32_t lid) const {
    const std::optional<std::uint64_t> s = find_subnet(subnet);
    if (!s) return kNoFabricNode;
    auto it = by_lid_.find(*s << 32 | lid);
    return it == by_lid_.end() ? kNoFabricNode : it->second;
}

bool Fabric::add_link(std::uint32_t a, std::uint16_t port_a, std::uint32_t b, std::uint16_t port_b,
                      std::uint8_t width, std::string_view speed) {
    const std::uint64_t end_a = std::uint64_t{a} << 16 | port_a;
    const std::uint64_t end_b = std::uint64_t{b} << 16 | port_b;
    auto ia = by_port_.find(end_a);
    auto ib = by_port_.find(end_b);
    if (ia != by_port_.end() || ib != by_port_.end()) {
        // The same cable seen from its other end is fine; a port cabled to two
        // different places is not.
        if (ia != by_port_.end() && ib != by_port_.end() && ia->second == ib->second) return true;
        return false;
    }
    const auto index = static_cast<std::uint32_t>(links_.size());
    links_.push_back(FabricLink{a, b, port_a, port_b, width, std::string(speed)});
    by_port_.emplace(end_a, index);
    by_port_.emplace(end_b, index);
    return true;
}

std::uint32_t Fabric::find_guid(std::uint64_t guid) const {
    auto it = by_guid_.find(guid);
    return it == by_guid_.end() ? kNoFabricNode : it->second;
}

std::size_t Fabric::count(FabricNodeKind kind) const {
    return static_cast<std::size_t>(
        std::count_if(nodes_.begin(), nodes_.end(), [kind](const FabricNode& n) { return n.kind == kind; }));
}

void Fabric::set_forwarding_table(std::uint32_t switch_node, ForwardingTable table) {
    tables_[switch_node] = std::move(table);
}

const ForwardingTable* Fabric::forwarding_table(std::uint32_t switch_node) const {
    auto it = tables_.find(switch_node);
    return it == tables_.end() ? nullptr : &it->second;
}

void Fabric::finish() {
    offsets_.assign(nodes_.size() + 1, 0);
    for (const FabricLink& l : links_) {
        ++offsets_[l.a + 1];
        if (l.b != l.a) ++offsets_[l.b + 1];
    }
    for (std::size_t i = 1; i < offsets_.size(); ++i) offsets_[i] += offsets_[i - 1];
    adjacency_.assign(offsets_.back(), Neighbour{});
    std::vector<std::uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
    for (std::uint32_t i = 0; i < links_.size(); ++i) {
        const FabricLink& l = links_[i];
        adjacency_[fill[l.a]++] = Neighbour{l.b, i, l.port_a};
        if (l.b != l.a) adjacency_[fill[l.b]++] = Neighbour{l.a, i, l.port_b};
    }
}

const Fabric::Neighbour* Fabric::through_port(std::uint32_t node, std::uint16_t port) const {
    for (const Neighbour* n = neighbours_begin(node); n != neighbours_end(node); ++n)
        if (n->local_port == port) return n;
    return nullptr;
}

namespace {
int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}
}  // namespace

std::optional<std::uint64_t> parse_guid(std::string_view text) {
    if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
    // A GID: the GUID is its last 64 bits, the last four groups.
    if (std::count(text.begin(), text.end(), ':') == 7) {
        std::size_t colons = 0, at = 0;
        for (; at < text.size() && colons < 4; ++at)
            if (text[at] == ':') ++colons;
        text.remove_prefix(at);
    }
    std::uint64_t value = 0;
    int digits = 0;
    for (char c : text) {
        if (c == ':') continue;
        const int v = hex_value(c);
        if (v < 0 || ++digits > 16) return std::nullopt;
        value = value << 4 | static_cast<std::uint64_t>(v);
    }
    if (digits == 0) return std::nullopt;
    return value;
}

std::string format_guid(std::uint64_t guid) {
    static const char kDigits[] = "0123456789abcdef";
    std::string out = "0x0000000000000000";
    for (int i = 17; i >= 2; --i, guid >>= 4) out[static_cast<std::size_t>(i)] = kDigits[guid & 15];
    return out;
}

}  // namespace stacksage
