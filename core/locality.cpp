#include "core/locality.hpp"

#include <charconv>
#include <vector>

#include "core/model.hpp"

namespace stacksage {

namespace {

std::size_t position_among_siblings(const Model& model, ComponentId id) {
    std::size_t position = 0;
    for (ComponentId s = model.prev_sibling(id); s != kNoComponent; s = model.prev_sibling(s))
        ++position;
    return position;
}

std::size_t position_among_roots(const Model& model, ComponentId root) {
    const std::vector<ComponentId> roots = model.roots();
    for (std::size_t i = 0; i < roots.size(); ++i)
        if (roots[i] == root) return i;
    return 0;  // unreachable for a live root
}

}  // namespace

std::string domain_tag(const Model& model, ComponentId id) {
    if (!model.is_alive(id)) return {};
    // Collected leaf first, written root first.
    std::vector<std::size_t> positions;
    ComponentId at = id;
    for (ComponentId up = model.parent(at); up != kNoComponent; at = up, up = model.parent(at))
        positions.push_back(position_among_siblings(model, at));
    positions.push_back(position_among_roots(model, at));

    std::string tag;
    for (auto it = positions.rbegin(); it != positions.rend(); ++it) {
        if (!tag.empty()) tag += '.';
        tag += std::to_string(*it);
    }
    return tag;
}

ComponentId find_by_domain_tag(const Model& model, std::string_view tag) {
    if (tag.empty()) return kNoComponent;
    ComponentId at = kNoComponent;
    bool first = true;
    std::size_t begin = 0;
    while (begin <= tag.size()) {
        std::size_t end = tag.find('.', begin);
        if (end == std::string_view::npos) end = tag.size();
        const std::string_view part = tag.substr(begin, end - begin);
        // from_chars accepts neither signs nor spaces, as wanted; it must
        // consume the whole part. Leading zeros are refused so that each
        // component has exactly one tag (tags are compared as strings).
        std::size_t position = 0;
        const auto [ptr, ec] = std::from_chars(part.data(), part.data() + part.size(), position);
        if (part.empty() || ec != std::errc{} || ptr != part.data() + part.size() ||
            (part.size() > 1 && part[0] == '0'))
            return kNoComponent;

        if (first) {
            const std::vector<ComponentId> roots = model.roots();
            if (position >= roots.size()) return kNoComponent;
            at = roots[position];
            first = false;
        } else {
            ComponentId child = model.first_child(at);
            for (std::size_t i = 0; i < position && child != kNoComponent; ++i)
                child = model.next_sibling(child);
            if (child == kNoComponent) return kNoComponent;
            at = child;
        }
        begin = end + 1;
    }
    return at;
}

ComponentId lowest_common_ancestor(const Model& model, ComponentId a, ComponentId b) {
    if (!model.is_alive(a) || !model.is_alive(b)) return kNoComponent;
    int depth_a = model.depth(a);
    int depth_b = model.depth(b);
    // Bring both to the same depth, then climb together until they meet.
    for (; depth_a > depth_b; --depth_a) a = model.parent(a);
    for (; depth_b > depth_a; --depth_b) b = model.parent(b);
    while (a != b) {
        a = model.parent(a);
        b = model.parent(b);
    }
    return a;  // kNoComponent when both climbed past different roots
}

int hop_distance(const Model& model, ComponentId a, ComponentId b) {
    const ComponentId lca = lowest_common_ancestor(model, a, b);
    if (lca == kNoComponent) return -1;
    return model.depth(a) + model.depth(b) - 2 * model.depth(lca);
}

}  // namespace stacksage
