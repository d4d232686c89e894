#include "core/model_copy.hpp"

#include <algorithm>
#include <unordered_map>

namespace stacksage {

ComponentId import_subtree(Model& dst, ComponentId dst_parent, const Model& src, ComponentId src_root,
                           const CopyOptions& options) {
    if (index_of(src_root) >= src.component_capacity() || !src.is_alive(src_root)) return kNoComponent;
    if (dst_parent != kNoComponent && (index_of(dst_parent) >= dst.component_capacity() || !dst.is_alive(dst_parent)))
        return kNoComponent;

    // Source key -> destination key, or absent when the key is not copied.
    std::unordered_map<AttrKey, AttrKey> key_map;
    std::vector<AttrKey> wanted;
    if (options.attribute_names)
        for (const auto& name : *options.attribute_names)
            if (auto k = src.find_key(name)) wanted.push_back(*k);
    auto map_key = [&](AttrKey k) -> std::optional<AttrKey> {
        if (auto it = key_map.find(k); it != key_map.end()) return it->second;
        if (options.attribute_names && std::find(wanted.begin(), wanted.end(), k) == wanted.end()) return std::nullopt;
        AttrKey d = dst.key(src.key_name(k));
        key_map.emplace(k, d);
        return d;
    };

    // The attributes of src item s onto dst item d, the item-th copied of
    // its kind: shared from the earlier copy's list, or copied (and then
    // recorded, shared, for the next copies).
    SharedSubtreeAttributes* shared = options.shared;
    const bool reuse = shared != nullptr && shared->filled;
    std::size_t components_copied = 0, datapaths_copied = 0;
    auto copy_attributes = [&](auto s, auto d, std::vector<Model::SharedAttributes>* lists, std::size_t item) {
        if (reuse && item < lists->size()) {
            dst.adopt_attributes(d, (*lists)[item]);
            return;
        }
        src.for_each_attr(s, [&](AttrKey k, const AttributeValue& v) {
            if (auto dk = map_key(k)) dst.set_attr(d, *dk, v);
        });
        if (lists != nullptr && !reuse) lists->push_back(dst.share_attributes(d));
    };

    std::unordered_map<std::uint32_t, ComponentId> id_map;  // src index -> dst id
    std::vector<std::pair<ComponentId, ComponentId>> order;  // (src, dst) in walk order
    const std::size_t size = src.subtree_size(src_root);
    dst.reserve(size);
    id_map.reserve(size);
    ComponentId copied_root = kNoComponent;
    src.walk_subtree(src_root, [&](ComponentId s, int) {
        ComponentId parent = (s == src_root) ? dst_parent : id_map.at(index_of(src.parent(s)));
        ComponentId d = dst.add_component(src.type(s), parent, src.kind(s), src.name(s), src.os_index(s));
        id_map.emplace(index_of(s), d);
        order.emplace_back(s, d);
        if (s == src_root) copied_root = d;
        copy_attributes(s, d, shared ? &shared->components : nullptr, components_copied++);
    });

    if (options.datapaths) {
        for (const auto& [s_source, d_source] : order) {
            auto paths = src.all_datapaths(s_source, Direction::Out);
            // Lists are newest first: add oldest first so the copy lists them alike.
            for (auto it = paths.rbegin(); it != paths.rend(); ++it) {
                DataPathId p = *it;
                auto t = id_map.find(index_of(src.target(p)));
                if (t == id_map.end()) continue;  // leaves the subtree
                DataPathType type = src.type(p);
                if (static_cast<std::uint32_t>(type) >= kFirstUserDataPathType)
                    type = dst.datapath_type(src.datapath_type_name(type));
                DataPathId q = dst.add_datapath(d_source, t->second, type, src.oriented(p), src.bandwidth(p),
                                                src.latency(p));
                copy_attributes(p, q, shared ? &shared->datapaths : nullptr, datapaths_copied++);
            }
        }
    }
    if (shared != nullptr && copied_root != kNoComponent) shared->filled = true;
    return copied_root;
}

Model extract_subtree(const Model& src, ComponentId root, const CopyOptions& options) {
    Model out;
    import_subtree(out, kNoComponent, src, root, options);
    return out;
}

}  // namespace stacksage
