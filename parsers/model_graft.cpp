#include "parsers/model_graft.hpp"

#include <vector>

namespace stacksage {

Result<ComponentId> graft_subtree(const Model& from, ComponentId root, Model& to, ComponentId parent) {
    if (!from.is_alive(root)) return make_error("graft_subtree: the source component is not alive");
    if (parent != kNoComponent && !to.is_alive(parent))
        return make_error("graft_subtree: the target parent is not alive");

    // Source id -> copy id; kNoComponent outside the subtree.
    std::vector<ComponentId> copy_of(from.component_capacity(), kNoComponent);
    // Source key -> destination key, filled on first use (keys are few).
    std::vector<AttrKey> key_map;
    auto map_key = [&](AttrKey k) {
        if (k >= key_map.size()) key_map.resize(k + 1, static_cast<AttrKey>(-1));
        if (key_map[k] == static_cast<AttrKey>(-1)) key_map[k] = to.key(from.key_name(k));
        return key_map[k];
    };

    // No to.reserve() here: it grows the arrays to the exact size asked, so a
    // caller grafting many subtrees would copy the whole model each time.
    from.walk_subtree(root, [&](ComponentId id, int) {
        const ComponentId up = id == root ? parent : copy_of[index_of(from.parent(id))];
        const ComponentId c = to.add_component(from.type(id), up, from.kind(id), from.name(id), from.os_index(id));
        copy_of[index_of(id)] = c;
        from.for_each_attr(id, [&](AttrKey k, const AttributeValue& v) { to.set_attr(c, map_key(k), v); });
    });

    from.walk_subtree(root, [&](ComponentId id, int) {
        for (DataPathId dp : from.all_datapaths(id, Direction::Out)) {
            const ComponentId target = from.target(dp);
            if (index_of(target) >= copy_of.size() || copy_of[index_of(target)] == kNoComponent) continue;
            const DataPathType type = static_cast<std::uint32_t>(from.type(dp)) < kFirstUserDataPathType
                                          ? from.type(dp)
                                          : to.datapath_type(from.datapath_type_name(from.type(dp)));
            const DataPathId copy = to.add_datapath(copy_of[index_of(id)], copy_of[index_of(target)], type,
                                                    from.oriented(dp), from.bandwidth(dp), from.latency(dp));
            from.for_each_attr(dp, [&](AttrKey k, const AttributeValue& v) { to.set_attr(copy, map_key(k), v); });
        }
    });
    return copy_of[index_of(root)];
}

}  // namespace stacksage
