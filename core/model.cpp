#include "core/model.hpp"

#include <stdexcept>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fmt/format.h>

namespace stacksage {

namespace {

// A free attribute entry: the one freed last, or a new one at the end
// (which may move the entries: callers index, never hold a reference).
template <class Entries> std::uint32_t take_slot(Entries& entries, PodArray<std::uint32_t>& free_slots) {
    if (!free_slots.empty()) {
        const std::uint32_t slot = free_slots.back();
        free_slots.pop_back();
        return slot;
    }
    entries.emplace_back();
    return static_cast<std::uint32_t>(entries.size() - 1);
}

}  // namespace

// ---- String tables ---------------------------------------------------------

std::uint32_t Model::StringTable::intern(std::string_view s) {
    std::uint32_t* remembered = nullptr;
    if (!s.empty()) {
        remembered = &recent[recent_slot(s)];
        if (*remembered < size() && get(*remembered) == s) return *remembered;
    }
    std::uint32_t id;
    if (auto it = index.find(s); it != index.end()) {
        id = it->second;
    } else {
        id = size();
        blob.append(s.begin(), s.end());
        offsets.push_back(static_cast<std::uint32_t>(blob.size()));
        index.emplace(std::string(s), id);
    }
    if (remembered) *remembered = id;
    return id;
}

std::optional<std::uint32_t> Model::StringTable::find(std::string_view s) const {
    if (!blob.borrowed()) {
        if (auto it = index.find(s); it != index.end()) return it->second;
        return std::nullopt;
    }
    for (std::uint32_t i = 0; i < size(); ++i)
        if (get(i) == s) return i;
    return std::nullopt;
}

void Model::StringTable::make_owned() {
    if (!blob.borrowed() && !offsets.borrowed()) return;
    offsets.make_owned();
    blob.make_owned();
    index.clear();
    for (std::uint32_t i = 0; i < size(); ++i) index.emplace(std::string(get(i)), i);
}

void Model::make_owned() {
    components_.make_owned();
    datapaths_.make_owned();
    type_heads_.make_owned();
    attrs_.make_owned();
    chars_.make_owned();
    cpuset_words_.make_owned();
    for (auto& v : by_type_) v.make_owned();
    free_attrs_.make_owned();
    words_.make_owned();
    keys_.make_owned();
    user_types_.make_owned();
    mapping_.reset();
    borrowed_ = false;
}

Model::Model() {
    words_.intern("");  // id 0: the empty kind/name
    for (auto name : keys::names) keys_.intern(name);
}

// ---- Components ------------------------------------------------------------

ComponentId Model::add_component(ComponentType type, ComponentId parent, std::string_view kind,
                                 std::string_view name, std::int64_t os_index) {
    ensure_owned();
    auto id = static_cast<std::uint32_t>(components_.size());
    ComponentRecord r{};
    r.type = type;
    r.alive = true;
    r.kind = kind.empty() ? 0 : words_.intern(kind);
    r.name = name.empty() ? 0 : words_.intern(name);
    r.os_index = static_cast<std::int32_t>(os_index);
    r.parent = r.first_child = r.last_child = r.next_sibling = r.prev_sibling = kNil;
    r.first_attr = r.first_type_head = kNil;
    components_.push_back(r);
    by_type_[static_cast<int>(type)].push_back(id);
    ++live_components_;
    if (parent != kNoComponent) link_child(index_of(parent), id, kNil);
    return ComponentId{id};
}

void Model::reserve(std::size_t components, std::size_t datapaths, std::size_t attributes) {
    ensure_owned();
    // At least double when growing, so that callers reserving a little at a
    // time (one node after another) stay linear overall.
    auto grow = [](auto& array, std::size_t more) {
        const std::size_t need = array.size() + more;
        if (need > array.capacity()) array.reserve(std::max(need, 2 * array.capacity()));
    };
    grow(components_, components);
    grow(datapaths_, datapaths);
    grow(attrs_, attributes);
}

bool Model::is_alive(ComponentId id) const {
    return index_of(id) < components_.size() && components_[index_of(id)].alive;
}
ComponentType Model::type(ComponentId id) const { return rec(id).type; }
std::string_view Model::kind(ComponentId id) const { return words_.get(rec(id).kind); }
std::string_view Model::name(ComponentId id) const { return words_.get(rec(id).name); }
std::int64_t Model::os_index(ComponentId id) const { return rec(id).os_index; }
void Model::set_kind(ComponentId id, std::string_view kind) { ensure_owned(); rec(id).kind = kind.empty() ? 0 : words_.intern(kind); }
void Model::set_name(ComponentId id, std::string_view name) { ensure_owned(); rec(id).name = name.empty() ? 0 : words_.intern(name); }
void Model::set_os_index(ComponentId id, std::int64_t os_index) { ensure_owned(); rec(id).os_index = static_cast<std::int32_t>(os_index); }

std::size_t Model::count_of_type(ComponentType type) const {
    std::size_t n = 0;
    for (auto i : by_type_[static_cast<int>(type)]) n += components_[i].alive;
    return n;
}

std::vector<ComponentId> Model::components_of_type(ComponentType type) const {
    std::vector<ComponentId> out;
    const auto& list = by_type_[static_cast<int>(type)];
    out.reserve(list.size());
    for (auto i : list)
        if (components_[i].alive) out.push_back(ComponentId{i});
    return out;
}

// ---- Tree ------------------------------------------------------------------

static ComponentId as_id(std::uint32_t i) { return ComponentId{i}; }

ComponentId Model::parent(ComponentId id) const { return as_id(rec(id).parent); }
ComponentId Model::first_child(ComponentId id) const { return as_id(rec(id).first_child); }
ComponentId Model::last_child(ComponentId id) const { return as_id(rec(id).last_child); }
ComponentId Model::next_sibling(ComponentId id) const { return as_id(rec(id).next_sibling); }
ComponentId Model::prev_sibling(ComponentId id) const { return as_id(rec(id).prev_sibling); }

std::vector<ComponentId> Model::children(ComponentId id) const {
    std::vector<ComponentId> out;
    for (auto c = rec(id).first_child; c != kNil; c = components_[c].next_sibling) out.push_back(as_id(c));
    return out;
}

std::size_t Model::child_count(ComponentId id) const {
    std::size_t n = 0;
    for (auto c = rec(id).first_child; c != kNil; c = components_[c].next_sibling) ++n;
    return n;
}

std::vector<ComponentId> Model::roots() const {
    std::vector<ComponentId> out;
    for (std::uint32_t i = 0; i < components_.size(); ++i)
        if (components_[i].alive && components_[i].parent == kNil) out.push_back(as_id(i));
    return out;
}

int Model::depth(ComponentId id) const {
    int d = 0;
    for (auto p = rec(id).parent; p != kNil; p = components_[p].parent) ++d;
    return d;
}

ComponentId Model::ancestor_of_type(ComponentId id, ComponentType type) const {
    for (auto p = rec(id).parent; p != kNil; p = components_[p].parent)
        if (components_[p].type == type) return as_id(p);
    return kNoComponent;
}

// Pre-order successor of `cur` inside the subtree of `root`, or kNil.
// `depth` is adjusted by the number of levels moved.
#define STACKSAGE_NEXT_PREORDER(cur, root, depth)                           \
    do {                                                                    \
        if (components_[cur].first_child != kNil) {                         \
            cur = components_[cur].first_child;                             \
            ++depth;                                                        \
            break;                                                          \
        }                                                                   \
        while (cur != root && components_[cur].next_sibling == kNil) {      \
            cur = components_[cur].parent;                                  \
            --depth;                                                        \
        }                                                                   \
        cur = (cur == root) ? kNil : components_[cur].next_sibling;         \
    } while (0)

std::vector<ComponentId> Model::descendants_of_type(ComponentId id, ComponentType type) const {
    std::vector<ComponentId> out;
    std::uint32_t root = index_of(id), cur = root;
    int depth = 0;
    STACKSAGE_NEXT_PREORDER(cur, root, depth);
    while (cur != kNil) {
        if (components_[cur].type == type) out.push_back(as_id(cur));
        STACKSAGE_NEXT_PREORDER(cur, root, depth);
    }
    return out;
}

void Model::walk_subtree(ComponentId id, const std::function<void(ComponentId, int)>& fn) const {
    std::uint32_t root = index_of(id), cur = root;
    int depth = 0;
    while (cur != kNil) {
        fn(as_id(cur), depth);
        STACKSAGE_NEXT_PREORDER(cur, root, depth);
    }
}

std::size_t Model::subtree_size(ComponentId id) const {
    std::size_t n = 0;
    std::uint32_t root = index_of(id), cur = root;
    int depth = 0;
    while (cur != kNil) {
        ++n;
        STACKSAGE_NEXT_PREORDER(cur, root, depth);
    }
    return n;
}

bool Model::is_ancestor(ComponentId ancestor, ComponentId id) const {
    for (auto p = rec(id).parent; p != kNil; p = components_[p].parent)
        if (p == index_of(ancestor)) return true;
    return false;
}

ComponentId Model::find(ComponentType type, std::int64_t os_index, ComponentId within) const {
    for (auto i : by_type_[static_cast<int>(type)]) {
        const auto& r = components_[i];
        if (!r.alive || r.os_index != os_index) continue;
        if (within == kNoComponent || i == index_of(within) || is_ancestor(within, as_id(i))) return as_id(i);
    }
    return kNoComponent;
}

void Model::link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t before) {
    auto& p = components_[parent];
    auto& c = components_[child];
    c.parent = parent;
    if (before == kNil) {
        c.prev_sibling = p.last_child;
        c.next_sibling = kNil;
        if (p.last_child != kNil) components_[p.last_child].next_sibling = child;
        else p.first_child = child;
        p.last_child = child;
    } else {
        auto& b = components_[before];
        c.next_sibling = before;
        c.prev_sibling = b.prev_sibling;
        if (b.prev_sibling != kNil) components_[b.prev_sibling].next_sibling = child;
        else p.first_child = child;
        b.prev_sibling = child;
    }
}

void Model::unlink_from_parent(std::uint32_t child) {
    auto& c = components_[child];
    if (c.parent == kNil) return;
    auto& p = components_[c.parent];
    if (c.prev_sibling != kNil) components_[c.prev_sibling].next_sibling = c.next_sibling;
    else p.first_child = c.next_sibling;
    if (c.next_sibling != kNil) components_[c.next_sibling].prev_sibling = c.prev_sibling;
    else p.last_child = c.prev_sibling;
    c.parent = c.prev_sibling = c.next_sibling = kNil;
}

bool Model::move(ComponentId id, ComponentId new_parent) {
    return move_before(id, new_parent, kNoComponent);
}

bool Model::move_before(ComponentId id, ComponentId new_parent, ComponentId before) {
    ensure_owned();
    if (new_parent != kNoComponent && (new_parent == id || is_ancestor(id, new_parent))) return false;
    if (before != kNoComponent && (new_parent == kNoComponent || parent(before) != new_parent || before == id))
        return false;
    unlink_from_parent(index_of(id));
    if (new_parent != kNoComponent) link_child(index_of(new_parent), index_of(id), index_of(before));
    return true;
}

void Model::remove_subtree(ComponentId id) {
    ensure_owned();
    std::uint32_t root = index_of(id);
    unlink_from_parent(root);
    // Detached: the subtree is now rooted at `root`; walk it and kill each node.
    std::uint32_t cur = root;
    int depth = 0;
    while (cur != kNil) {
        auto& r = components_[cur];
        for (auto h = r.first_type_head; h != kNil; h = type_heads_[h].next) {
            while (type_heads_[h].out_head != kNil) remove_datapath(DataPathId{type_heads_[h].out_head});
            while (type_heads_[h].in_head != kNil) remove_datapath(DataPathId{type_heads_[h].in_head});
        }
        release_attributes(r.first_attr, r.flags);
        std::uint32_t next = cur;
        STACKSAGE_NEXT_PREORDER(next, root, depth);
        components_[cur].alive = false;
        --live_components_;
        cur = next;
    }
}

std::vector<std::string> Model::check_consistency() const {
    std::vector<std::string> problems;
    std::size_t live = 0;
    const auto n = static_cast<std::uint32_t>(components_.size());
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto& r = components_[i];
        if (!r.alive) continue;
        ++live;
        if (r.parent != kNil && (r.parent >= n || !components_[r.parent].alive))
            problems.push_back(fmt::format("component {}: parent {} is not a live component", i, r.parent));
        // Walk up: a chain longer than the number of components is a cycle.
        std::uint32_t steps = 0;
        for (auto p = r.parent; p != kNil && p < n; p = components_[p].parent)
            if (++steps > n) { problems.push_back(fmt::format("component {}: cycle in parent links", i)); break; }
        std::uint32_t prev = kNil, count = 0;
        for (auto c = r.first_child; c != kNil; c = components_[c].next_sibling) {
            if (c >= n || !components_[c].alive) {
                problems.push_back(fmt::format("component {}: child {} is not a live component", i, c));
                break;
            }
            if (components_[c].parent != i)
                problems.push_back(fmt::format("component {}: child {} names {} as parent", i, c, components_[c].parent));
            if (components_[c].prev_sibling != prev)
                problems.push_back(fmt::format("component {}: wrong previous-sibling link", c));
            prev = c;
            if (++count > n) { problems.push_back(fmt::format("component {}: cycle in child list", i)); break; }
        }
        if (r.last_child != prev) problems.push_back(fmt::format("component {}: wrong last-child link", i));
    }
    if (live != live_components_)
        problems.push_back(fmt::format("{} live components counted, {} recorded", live, live_components_));
    std::size_t live_dp = 0;
    for (std::uint32_t i = 0; i < datapaths_.size(); ++i) {
        const auto& d = datapaths_[i];
        if (!d.alive) continue;
        ++live_dp;
        for (auto end : {d.source, d.target})
            if (end >= n || !components_[end].alive)
                problems.push_back(fmt::format("datapath {}: end {} is not a live component", i, end));
    }
    if (live_dp != live_datapaths_)
        problems.push_back(fmt::format("{} live datapaths counted, {} recorded", live_dp, live_datapaths_));
    return problems;
}

// ---- Attributes ----------------------------------------------------------------

AttrKey Model::key(std::string_view name) {
    // A mapped model is only copied when the key is new to it.
    if (borrowed_) {
        if (auto k = keys_.find(name)) return *k;
        ensure_owned();
    }
    const std::uint32_t known = keys_.size();
    if (known >= kMaxAttrKeys && !keys_.find(name))
        throw std::length_error("the model holds " + std::to_string(known) +
                                " attribute keys, the most it can; the input names too many distinct attributes");
    const AttrKey k = keys_.intern(name);
    if (keys_.size() != known) refresh_run_keys();
    return k;
}
std::optional<AttrKey> Model::find_key(std::string_view name) const { return keys_.find(name); }
std::string_view Model::key_name(AttrKey key) const {
    return key < keys_.size() ? keys_.get(key) : std::string_view();
}

Model::AttrEntry* Model::find_attr(std::uint32_t head, AttrKey key) {
    for (auto a = head; a != kNil; a = attrs_[a].next)
        if (attrs_[a].key == key) return &attrs_[a];
    return nullptr;
}
const Model::AttrEntry* Model::find_attr(std::uint32_t head, AttrKey key) const {
    for (auto a = head; a != kNil; a = attrs_[a].next)
        if (attrs_[a].key == key) return &attrs_[a];
    return nullptr;
}

// Existing entry for key, or a new one appended to the owner's list (so
// iteration order is insertion order).
Model::AttrEntry& Model::attr_slot(std::uint32_t& head, AttrKey key) {
    const std::uint64_t key_bit = key < 64 ? std::uint64_t{1} << key : 0;
    std::uint32_t last = kNil;
    std::uint64_t small_keys = 0;
    if (key_bit && head != kNil && head == appended_.head && !(appended_.small_keys & key_bit)) {
        // The list we appended to last, and the key is not in it.
        last = appended_.tail;
        small_keys = appended_.small_keys;
    } else {
        for (auto a = head; a != kNil; a = attrs_[a].next) {
            if (attrs_[a].key == key) return attrs_[a];
            if (attrs_[a].key < 64) small_keys |= std::uint64_t{1} << attrs_[a].key;
            last = a;
        }
    }
    const std::uint32_t slot = take_slot(attrs_, free_attrs_);
    AttrEntry& e = attrs_[slot];
    e.key = key;
    e.kind = AttrKind::Int;
    e.next = kNil;
    e.i = 0;
    if (last == kNil) head = slot;
    else attrs_[last].next = slot;
    appended_ = AppendedList{head, slot, small_keys | key_bit};
    return e;
}

void Model::store_string(AttrEntry& e, std::string_view value) {
    if (!chars_.empty() && value.data() >= chars_.begin() && value.data() < chars_.end()) {
        // The value lives in chars_ itself (copied from another attribute of
        // this model): appending could move it, so copy it out first.
        std::string copy(value);
        store_string(e, copy);
        return;
    }
    e.kind = AttrKind::String;
    if (recent_strings_.empty()) recent_strings_.resize(kRecentValues);
    ValueSpan& recent = recent_strings_[std::hash<std::string_view>{}(value) % kRecentValues];
    // Compared byte by byte (and bounded): a slot may name bytes that an
    // assignment of the arrays replaced since.
    if (recent.length == value.size() && std::uint64_t{recent.offset} + recent.length <= chars_.size() &&
        std::equal(value.begin(), value.end(), chars_.data() + recent.offset)) {
        e.span.offset = recent.offset;
        e.span.length = recent.length;
        return;
    }
    e.span.offset = static_cast<std::uint32_t>(chars_.size());
    e.span.length = static_cast<std::uint32_t>(value.size());
    chars_.append(value.begin(), value.end());
    recent = {e.span.offset, e.span.length};
}

void Model::store_cpuset(AttrEntry& e, const Cpuset& value) {
    e.kind = AttrKind::Cpuset;
    auto w = value.words();
    std::uint64_t hash = w.size();
    for (std::uint64_t word : w) hash = (hash ^ word) * 0x100000001b3ull;
    if (recent_cpusets_.empty()) recent_cpusets_.resize(kRecentValues);
    ValueSpan& recent = recent_cpusets_[(hash ^ (hash >> 29)) % kRecentValues];
    if (recent.length == w.size() && std::uint64_t{recent.offset} + recent.length <= cpuset_words_.size() &&
        std::equal(w.begin(), w.end(), cpuset_words_.data() + recent.offset)) {
        e.span.offset = recent.offset;
        e.span.length = recent.length;
        return;
    }
    e.span.offset = static_cast<std::uint32_t>(cpuset_words_.size());
    e.span.length = static_cast<std::uint32_t>(w.size());
    cpuset_words_.append(w.begin(), w.end());
    recent = {e.span.offset, e.span.length};
}

std::string_view Model::string_of(const AttrEntry& e) const {
    return {chars_.data() + e.span.offset, e.span.length};
}

Cpuset Model::cpuset_of(const AttrEntry& e) const {
    return Cpuset::from_words({cpuset_words_.data() + e.span.offset, e.span.length});
}

AttributeValue Model::value_of(const AttrEntry& e) const {
    switch (e.kind) {
        case AttrKind::Int: return e.i;
        case AttrKind::Float: return e.f;
        case AttrKind::String: return std::string(string_of(e));
        case AttrKind::Cpuset: return cpuset_of(e);
    }
    return std::int64_t{0};
}

void Model::unshare_attributes(std::uint32_t& head, std::uint16_t& flags) {
    if (!(flags & kSharedAttributes)) return;
    flags &= static_cast<std::uint16_t>(~kSharedAttributes);
    std::uint32_t copy_head = kNil, copy_tail = kNil;
    for (auto a = head; a != kNil; a = attrs_[a].next) {
        const std::uint32_t slot = take_slot(attrs_, free_attrs_);  // may move attrs_: index, never hold a reference
        attrs_[slot] = attrs_[a];  // the value's bytes (string, cpuset) stay shared: they are never changed
        attrs_[slot].next = kNil;
        if (copy_tail == kNil) copy_head = slot;
        else attrs_[copy_tail].next = slot;
        copy_tail = slot;
    }
    head = copy_head;
    forget_appended_list();
}

void Model::release_attributes(std::uint32_t& head, std::uint16_t& flags) {
    if (!(flags & kSharedAttributes))
        for (auto a = head; a != kNil; a = attrs_[a].next) free_attrs_.push_back(a);
    if (head != kNil) forget_appended_list();
    head = kNil;
    flags &= static_cast<std::uint16_t>(~kSharedAttributes);
}

Model::SharedAttributes Model::share_attributes(ComponentId id) {
    ensure_owned();
    ComponentRecord& r = rec(id);
    r.flags |= kSharedAttributes;
    forget_appended_list();  // no append may skip the walk on a frozen list
    return SharedAttributes(r.first_attr);
}

Model::SharedAttributes Model::share_attributes(DataPathId id) {
    ensure_owned();
    DataPathRecord& d = datapaths_[index_of(id)];
    d.flags |= kSharedAttributes;
    forget_appended_list();
    return SharedAttributes(d.first_attr);
}

void Model::adopt_attributes(ComponentId id, SharedAttributes list) {
    ensure_owned();
    ComponentRecord& r = rec(id);
    release_attributes(r.first_attr, r.flags);
    r.first_attr = list.head_;
    if (list.head_ != kNil) r.flags |= kSharedAttributes;
}

void Model::adopt_attributes(DataPathId id, SharedAttributes list) {
    ensure_owned();
    DataPathRecord& d = datapaths_[index_of(id)];
    release_attributes(d.first_attr, d.flags);
    d.first_attr = list.head_;
    if (list.head_ != kNil) d.flags |= kSharedAttributes;
}

bool Model::has_shared_attributes() const {
    for (std::uint32_t i = 0; i < components_.size(); ++i)
        if (components_[i].alive && (components_[i].flags & kSharedAttributes)) return true;
    for (std::uint32_t i = 0; i < datapaths_.size(); ++i)
        if (datapaths_[i].alive && (datapaths_[i].flags & kSharedAttributes)) return true;
    return false;
}

bool Model::remove_attr_from(std::uint32_t& head, AttrKey key) {
    for (std::uint32_t* link = &head; *link != kNil; link = &attrs_[*link].next) {
        if (attrs_[*link].key == key) {
            auto dead = *link;
            *link = attrs_[dead].next;
            free_attrs_.push_back(dead);
            forget_appended_list();
            return true;
        }
    }
    return false;
}

void Model::for_each_attr_in(std::uint32_t head,
                             const std::function<void(AttrKey, const AttributeValue&)>& fn) const {
    for (auto a = head; a != kNil; a = attrs_[a].next) fn(attrs_[a].key, value_of(attrs_[a]));
}

#define STACKSAGE_SETTERS(IdType, HEAD, FLAGS)                                              \
    void Model::set_attr(IdType id, AttrKey key, std::int64_t value) {                      \
        ensure_owned(); unshare_attributes(HEAD, FLAGS);                                    \
        auto& e = attr_slot(HEAD, key); e.kind = AttrKind::Int; e.i = value;                \
    }                                                                                       \
    void Model::set_attr(IdType id, AttrKey key, double value) {                            \
        ensure_owned(); unshare_attributes(HEAD, FLAGS);                                    \
        auto& e = attr_slot(HEAD, key); e.kind = AttrKind::Float; e.f = value;              \
    }                                                                                       \
    void Model::set_attr(IdType id, AttrKey key, std::string_view value) {                  \
        ensure_owned(); unshare_attributes(HEAD, FLAGS);                                    \
        auto& e = attr_slot(HEAD, key); store_string(e, value);                             \
    }                                                                                       \
    void Model::set_attr(IdType id, AttrKey key, const Cpuset& value) {                     \
        ensure_owned(); unshare_attributes(HEAD, FLAGS);                                    \
        auto& e = attr_slot(HEAD, key); store_cpuset(e, value);                             \
    }                                                                                       \
    void Model::set_attr(IdType id, AttrKey key, const AttributeValue& value) {             \
        std::visit([&](const auto& v) {                                                     \
            using V = std::decay_t<decltype(v)>;                                            \
            if constexpr (std::is_same_v<V, std::string>) set_attr(id, key, std::string_view(v)); \
            else set_attr(id, key, v);                                                      \
        }, value);                                                                          \
    }                                                                                       \
    std::optional<std::int64_t> Model::get_int(IdType id, AttrKey key) const {              \
        auto* e = find_attr(HEAD, key);                                                     \
        if (!e || e->kind != AttrKind::Int) return std::nullopt;                            \
        return e->i;                                                                        \
    }                                                                                       \
    std::optional<double> Model::get_float(IdType id, AttrKey key) const {                  \
        auto* e = find_attr(HEAD, key);                                                     \
        if (!e || e->kind != AttrKind::Float) return std::nullopt;                          \
        return e->f;                                                                        \
    }                                                                                       \
    std::optional<std::string_view> Model::get_string(IdType id, AttrKey key) const {       \
        auto* e = find_attr(HEAD, key);                                                     \
        if (!e || e->kind != AttrKind::String) return std::nullopt;                         \
        return string_of(*e);                                                               \
    }                                                                                       \
    std::optional<Cpuset> Model::get_cpuset(IdType id, AttrKey key) const {                 \
        auto* e = find_attr(HEAD, key);                                                     \
        if (!e || e->kind != AttrKind::Cpuset) return std::nullopt;                         \
        return cpuset_of(*e);                                                               \
    }                                                                                       \
    std::optional<AttributeValue> Model::get_attr(IdType id, AttrKey key) const {           \
        auto* e = find_attr(HEAD, key);                                                     \
        if (!e) return std::nullopt;                                                        \
        return value_of(*e);                                                                \
    }                                                                                       \
    bool Model::remove_attr(IdType id, AttrKey key) {                                       \
        ensure_owned(); unshare_attributes(HEAD, FLAGS); return remove_attr_from(HEAD, key); \
    }                                                                                       \
    void Model::for_each_attr(IdType id,                                                    \
                              const std::function<void(AttrKey, const AttributeValue&)>& fn) const { \
        for_each_attr_in(HEAD, fn);                                                         \
    }

STACKSAGE_SETTERS(ComponentId, components_[index_of(id)].first_attr, components_[index_of(id)].flags)
STACKSAGE_SETTERS(DataPathId, datapaths_[index_of(id)].first_attr, datapaths_[index_of(id)].flags)
#undef STACKSAGE_SETTERS

bool Model::has_attr(ComponentId id, AttrKey key) const { return find_attr(rec(id).first_attr, key) != nullptr; }

Cpuset Model::cpuset(ComponentId id) const {
    auto* e = find_attr(rec(id).first_attr, keys::cpuset);
    return (e && e->kind == AttrKind::Cpuset) ? cpuset_of(*e) : Cpuset();
}

// ---- The run model's keys ---------------------------------------------------------

const RunModelKeys& Model::run_keys() const {
    std::lock_guard lock(run_keys_cache_.mutex);
    if (!run_keys_cache_.table) run_keys_cache_.table = RunModelKeys::found(*this);
    return *run_keys_cache_.table;
}

const RunModelKeys& Model::intern_run_keys() {
    if (!run_keys_cache_.complete) {
        // Reset first: interning one key after another need not refresh it each time.
        run_keys_cache_.table.reset();
        RunModelKeys keys = RunModelKeys::interned(*this);
        run_keys_cache_.table = keys;
        run_keys_cache_.complete = true;
    }
    return *run_keys_cache_.table;
}

// ---- DataPaths -----------------------------------------------------------------

DataPathType Model::datapath_type(std::string_view name) {
    if (auto b = builtin_datapath_type_from_name(name)) return *b;
    ensure_owned();
    const std::uint32_t known = user_types_.size();
    const auto type = static_cast<DataPathType>(kFirstUserDataPathType + user_types_.intern(name));
    if (user_types_.size() != known) refresh_run_keys();
    return type;
}

std::optional<DataPathType> Model::find_datapath_type(std::string_view name) const {
    if (auto b = builtin_datapath_type_from_name(name)) return b;
    if (auto u = user_types_.find(name)) return static_cast<DataPathType>(kFirstUserDataPathType + *u);
    return std::nullopt;
}

std::string_view Model::datapath_type_name(DataPathType type) const {
    auto t = static_cast<std::uint32_t>(type);
    if (t >= kFirstUserDataPathType) {
        t -= kFirstUserDataPathType;
        return t < user_types_.size() ? user_types_.get(t) : std::string_view();
    }
    return builtin_datapath_type_name(type);
}

Model::TypeHead* Model::find_type_head(std::uint32_t component, DataPathType type) {
    for (auto h = components_[component].first_type_head; h != kNil; h = type_heads_[h].next)
        if (type_heads_[h].type == type) return &type_heads_[h];
    return nullptr;
}
const Model::TypeHead* Model::find_type_head(std::uint32_t component, DataPathType type) const {
    for (auto h = components_[component].first_type_head; h != kNil; h = type_heads_[h].next)
        if (type_heads_[h].type == type) return &type_heads_[h];
    return nullptr;
}

Model::TypeHead& Model::get_or_add_type_head(std::uint32_t component, DataPathType type) {
    if (auto* h = find_type_head(component, type)) return *h;
    auto slot = static_cast<std::uint32_t>(type_heads_.size());
    type_heads_.push_back(TypeHead{type, kNil, 0, kNil, 0, components_[component].first_type_head});
    components_[component].first_type_head = slot;
    return type_heads_.back();
}

DataPathId Model::add_datapath(ComponentId source, ComponentId target, DataPathType type, bool oriented,
                               double bandwidth, double latency) {
    ensure_owned();
    auto id = static_cast<std::uint32_t>(datapaths_.size());
    DataPathRecord d{};
    d.source = index_of(source);
    d.target = index_of(target);
    d.type = type;
    d.alive = true;
    d.oriented = oriented;
    d.bandwidth = bandwidth;
    d.latency = latency;
    d.first_attr = kNil;
    d.prev_out = d.prev_in = kNil;
    {
        auto& out = get_or_add_type_head(d.source, type);
        d.next_out = out.out_head;
        if (out.out_head != kNil) datapaths_[out.out_head].prev_out = id;
        out.out_head = id;
        ++out.out_count;
    }
    {
        auto& in = get_or_add_type_head(d.target, type);
        d.next_in = in.in_head;
        if (in.in_head != kNil) datapaths_[in.in_head].prev_in = id;
        in.in_head = id;
        ++in.in_count;
    }
    datapaths_.push_back(d);
    ++live_datapaths_;
    return DataPathId{id};
}

void Model::unlink_datapath(std::uint32_t id) {
    auto& d = datapaths_[id];
    auto* out = find_type_head(d.source, d.type);
    if (d.prev_out != kNil) datapaths_[d.prev_out].next_out = d.next_out;
    else out->out_head = d.next_out;
    if (d.next_out != kNil) datapaths_[d.next_out].prev_out = d.prev_out;
    --out->out_count;
    auto* in = find_type_head(d.target, d.type);
    if (d.prev_in != kNil) datapaths_[d.prev_in].next_in = d.next_in;
    else in->in_head = d.next_in;
    if (d.next_in != kNil) datapaths_[d.next_in].prev_in = d.prev_in;
    --in->in_count;
    d.next_out = d.prev_out = d.next_in = d.prev_in = kNil;
}

void Model::remove_datapath(DataPathId id) {
    if (!is_alive(id)) return;
    ensure_owned();
    unlink_datapath(index_of(id));
    auto& d = datapaths_[index_of(id)];
    release_attributes(d.first_attr, d.flags);
    d.alive = false;
    --live_datapaths_;
}

bool Model::is_alive(DataPathId id) const {
    return index_of(id) < datapaths_.size() && datapaths_[index_of(id)].alive;
}
ComponentId Model::source(DataPathId id) const { return as_id(datapaths_[index_of(id)].source); }
ComponentId Model::target(DataPathId id) const { return as_id(datapaths_[index_of(id)].target); }
DataPathType Model::type(DataPathId id) const { return datapaths_[index_of(id)].type; }
bool Model::oriented(DataPathId id) const { return datapaths_[index_of(id)].oriented; }
double Model::bandwidth(DataPathId id) const { return datapaths_[index_of(id)].bandwidth; }
double Model::latency(DataPathId id) const { return datapaths_[index_of(id)].latency; }
void Model::set_bandwidth(DataPathId id, double value) { ensure_owned(); datapaths_[index_of(id)].bandwidth = value; }
void Model::set_latency(DataPathId id, double value) { ensure_owned(); datapaths_[index_of(id)].latency = value; }

Model::DataPathRange::Iterator& Model::DataPathRange::Iterator::operator++() {
    const auto& d = m_->datapaths_[at_];
    at_ = dir_ == Direction::Out ? d.next_out : d.next_in;
    return *this;
}

Model::DataPathRange Model::datapaths(ComponentId id, DataPathType type, Direction direction) const {
    const TypeHead* h = find_type_head(index_of(id), type);
    if (!h) return DataPathRange(this, kNil, 0, direction);
    return direction == Direction::Out ? DataPathRange(this, h->out_head, h->out_count, direction)
                                       : DataPathRange(this, h->in_head, h->in_count, direction);
}

std::vector<DataPathId> Model::all_datapaths(ComponentId id, Direction direction) const {
    std::vector<DataPathId> out;
    for (auto h = rec(id).first_type_head; h != kNil; h = type_heads_[h].next)
        for (auto dp : datapaths(id, type_heads_[h].type, direction)) out.push_back(dp);
    return out;
}

std::vector<DataPathType> Model::datapath_types_on(ComponentId id, Direction direction) const {
    std::vector<DataPathType> out;
    for (auto h = rec(id).first_type_head; h != kNil; h = type_heads_[h].next) {
        const auto& th = type_heads_[h];
        if ((direction == Direction::Out ? th.out_count : th.in_count) > 0) out.push_back(th.type);
    }
    return out;
}

std::size_t Model::memory_bytes_excluding_strings() const {
    std::size_t bytes = components_.capacity() * sizeof(ComponentRecord) +
                        datapaths_.capacity() * sizeof(DataPathRecord) +
                        type_heads_.capacity() * sizeof(TypeHead) + attrs_.capacity() * sizeof(AttrEntry) +
                        cpuset_words_.capacity() * sizeof(std::uint64_t) +
                        free_attrs_.capacity() * sizeof(std::uint32_t);
    for (const auto& v : by_type_) bytes += v.capacity() * sizeof(std::uint32_t);
    return bytes;
}

}  // namespace stacksage
