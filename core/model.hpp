// Model: the component tree, DataPaths and typed attributes.
//
// Everything lives in arrays owned by the Model and is addressed by ids:
// creating a component is a push_back, listing all components is a linear
// scan, and the DataPaths of one type on a component are found through a
// per-component, per-type list head, never by scanning all paths.
//
// Ids stay valid until the component or path is removed; removed slots are not
// reused (so an id seen in a log never silently names another component).
// Functions taking an id expect a live one unless they say otherwise.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "core/attribute_keys.hpp"
#include "core/component_type.hpp"
#include "core/cpuset.hpp"
#include "core/datapath_type.hpp"
#include "core/ids.hpp"
#include "core/pod_array.hpp"
#include "core/run_model_schema.hpp"
#include "core/typed_key.hpp"

namespace stacksage {

// A generic attribute value, for iteration and serialization. Typed getters
// (Model::get_int, ...) avoid the copy.
using AttributeValue = std::variant<std::int64_t, double, std::string, Cpuset>;
enum class AttrKind : std::uint8_t { Int = 0, Float = 1, String = 2, Cpuset = 3 };

class Model {
public:
    Model();

    // ---- Components ---------------------------------------------------------
    // Adds a component under parent (kNoComponent: a new root), as its last child.
    ComponentId add_component(ComponentType type, ComponentId parent,
                              std::string_view kind = {}, std::string_view name = {},
                              std::int64_t os_index = -1);

    // Makes room for this many more components, DataPaths and attributes, so
    // that a loader that knows its size pays for no reallocation. Growing
    // at least doubles the arrays: many small reserves stay linear.
    void reserve(std::size_t components, std::size_t datapaths = 0, std::size_t attributes = 0);

    bool is_alive(ComponentId id) const;
    ComponentType type(ComponentId id) const;
    std::string_view kind(ComponentId id) const;   // "package", "die", "L2", ...; may be empty
    std::string_view name(ComponentId id) const;   // free text; may be empty
    std::int64_t os_index(ComponentId id) const;   // -1 when unknown
    void set_kind(ComponentId id, std::string_view kind);
    void set_name(ComponentId id, std::string_view name);
    void set_os_index(ComponentId id, std::int64_t os_index);

    std::size_t component_count() const { return live_components_; }
    // One past the highest id ever handed out; ids below it may be dead.
    std::uint32_t component_capacity() const { return static_cast<std::uint32_t>(components_.size()); }
    std::size_t count_of_type(ComponentType type) const;

    // Calls fn(id) for every live component, in id order.
    template <class Fn> void for_each_component(Fn&& fn) const {
        for (std::uint32_t i = 0; i < components_.size(); ++i)
            if (components_[i].alive) fn(ComponentId{i});
    }
    // Live components of one type, in id order (indexed; no full scan).
    std::vector<ComponentId> components_of_type(ComponentType type) const;

    // ---- Tree ----------------------------------------------------------------
    ComponentId parent(ComponentId id) const;
    ComponentId first_child(ComponentId id) const;
    ComponentId last_child(ComponentId id) const;
    ComponentId next_sibling(ComponentId id) const;
    ComponentId prev_sibling(ComponentId id) const;
    std::vector<ComponentId> children(ComponentId id) const;
    std::size_t child_count(ComponentId id) const;
    std::vector<ComponentId> roots() const;

    // Depth below its root (a root has depth 0).
    int depth(ComponentId id) const;
    // Nearest ancestor of the type (not id itself), or kNoComponent.
    ComponentId ancestor_of_type(ComponentId id, ComponentType type) const;
    // Every descendant of the type (not id itself), in depth-first order.
    std::vector<ComponentId> descendants_of_type(ComponentId id, ComponentType type) const;
    // Calls fn(id, depth) for id and each descendant, depth-first, parents first.
    void walk_subtree(ComponentId root, const std::function<void(ComponentId, int)>& fn) const;
    std::size_t subtree_size(ComponentId id) const;
    bool is_ancestor(ComponentId ancestor, ComponentId id) const;

    // First component of the type with this os_index; within the subtree of
    // `within` when given. kNoComponent when there is none.
    ComponentId find(ComponentType type, std::int64_t os_index,
                     ComponentId within = kNoComponent) const;

    // Moves id (with its subtree) under new_parent, as last child; kNoComponent
    // makes it a root. Returns false, changing nothing, when new_parent is id
    // or one of its descendants.
    bool move(ComponentId id, ComponentId new_parent);
    // Moves id under new_parent just before `before` (a child of new_parent).
    bool move_before(ComponentId id, ComponentId new_parent, ComponentId before);
    // Deletes id and its whole subtree with their attributes and DataPaths. O(size).
    void remove_subtree(ComponentId id);

    // Problems found in the internal links (empty when consistent): broken
    // parent/child/sibling links, cycles, dangling DataPath ends, wrong counts.
    std::vector<std::string> check_consistency() const;

    // ---- Attributes (on components and DataPaths) ------------------------------
    // Interns; throws std::length_error past kMaxAttrKeys distinct keys.
    AttrKey key(std::string_view name);
    static constexpr std::uint32_t kMaxAttrKeys = 1u << 24;
    std::optional<AttrKey> find_key(std::string_view name) const;
    std::string_view key_name(AttrKey key) const;

    void set_attr(ComponentId id, AttrKey key, std::int64_t value);
    void set_attr(ComponentId id, AttrKey key, double value);
    void set_attr(ComponentId id, AttrKey key, std::string_view value);
    void set_attr(ComponentId id, AttrKey key, const Cpuset& value);
    void set_attr(DataPathId id, AttrKey key, std::int64_t value);
    void set_attr(DataPathId id, AttrKey key, double value);
    void set_attr(DataPathId id, AttrKey key, std::string_view value);
    void set_attr(DataPathId id, AttrKey key, const Cpuset& value);
    void set_attr(ComponentId id, AttrKey key, const AttributeValue& value);
    void set_attr(DataPathId id, AttrKey key, const AttributeValue& value);

    // nullopt when absent or of another kind.
    std::optional<std::int64_t> get_int(ComponentId id, AttrKey key) const;
    std::optional<double> get_float(ComponentId id, AttrKey key) const;
    std::optional<std::string_view> get_string(ComponentId id, AttrKey key) const;
    std::optional<Cpuset> get_cpuset(ComponentId id, AttrKey key) const;
    std::optional<std::int64_t> get_int(DataPathId id, AttrKey key) const;
    std::optional<double> get_float(DataPathId id, AttrKey key) const;
    std::optional<std::string_view> get_string(DataPathId id, AttrKey key) const;
    std::optional<Cpuset> get_cpuset(DataPathId id, AttrKey key) const;
    std::optional<AttributeValue> get_attr(ComponentId id, AttrKey key) const;
    std::optional<AttributeValue> get_attr(DataPathId id, AttrKey key) const;
    bool has_attr(ComponentId id, AttrKey key) const;
    bool remove_attr(ComponentId id, AttrKey key);
    bool remove_attr(DataPathId id, AttrKey key);
    // ---- Shared attribute lists -----------------------------------------------------
    // A loader that makes many components or paths with the same attributes
    // (each node's copy of one topology, the paths of one affinity interval:
    // 60 % of a million-rank run's entries) gives them one list instead of a
    // copy each. share_attributes freezes the list of id and returns it;
    // adopt_attributes gives it to another component or path, whose list
    // must be empty. They read it as their own; the first change to any of
    // them (set_attr, remove_attr) copies the list for that one first, so
    // no change shows through another (copy on write). A model holding
    // shared lists is not written as a snapshot (write_snapshot refuses it).
    class SharedAttributes {
    public:
        SharedAttributes() = default;
        bool empty() const { return head_ == 0xffffffffu; }
    private:
        friend class Model;
        explicit SharedAttributes(std::uint32_t head) : head_(head) {}
        std::uint32_t head_ = 0xffffffffu;
    };
    SharedAttributes share_attributes(ComponentId id);
    SharedAttributes share_attributes(DataPathId id);
    void adopt_attributes(ComponentId id, SharedAttributes list);
    void adopt_attributes(DataPathId id, SharedAttributes list);
    // \return true when some component or path holds a shared list.
    bool has_shared_attributes() const;

    // Calls fn(key, value) for each attribute, in the order they were first set.
    void for_each_attr(ComponentId id, const std::function<void(AttrKey, const AttributeValue&)>& fn) const;
    void for_each_attr(DataPathId id, const std::function<void(AttrKey, const AttributeValue&)>& fn) const;

    // The component's cpuset attribute, or an empty set.
    Cpuset cpuset(ComponentId id) const;

    // ---- Typed attributes (typed_key.hpp) ---------------------------------------
    // The value's type is the key's: an int key cannot be read as a string.
    // A key the model lacks (kAbsentKey) reads as absent; writing needs a present one.
    template <class T, class Id> std::optional<typename AttrTypes<T>::Read> get(Id id, Key<T> key) const {
        if constexpr (std::is_same_v<T, std::int64_t>) return get_int(id, key.id);
        else if constexpr (std::is_same_v<T, double>) return get_float(id, key.id);
        else if constexpr (std::is_same_v<T, std::string>) return get_string(id, key.id);
        else return get_cpuset(id, key.id);
    }
    template <class T, class Id>
    void set(Id id, Key<T> key, std::type_identity_t<typename AttrTypes<T>::Write> value) {
        set_attr(id, key.id, value);
    }
    template <class T> bool has(ComponentId id, Key<T> key) const { return has_attr(id, key.id); }

    // ---- The run model's keys (run_model_schema.hpp) ------------------------------
    // The table of the run model's keys as this model has them: those it
    // lacks are absent (Key::present() false), and read as absent. Looked up
    // once and kept (a key interned later is added to it); safe to call from
    // several threads at once. Valid as long as the model.
    const RunModelKeys& run_keys() const;
    // The same table with every key interned into this model (on the first
    // call): what writers of run models use.
    const RunModelKeys& intern_run_keys();

    // ---- DataPaths ----------------------------------------------------------------
    // Interns a user-named type (numbered from kFirstUserDataPathType); built-in
    // names return the built-in type.
    DataPathType datapath_type(std::string_view name);
    std::optional<DataPathType> find_datapath_type(std::string_view name) const;
    std::string_view datapath_type_name(DataPathType type) const;

    // oriented=false marks a symmetric relation; it is still stored (and found)
    // as source -> target. Bandwidth and latency: NaN when unknown.
    DataPathId add_datapath(ComponentId source, ComponentId target, DataPathType type,
                            bool oriented = true, double bandwidth = kUnknown,
                            double latency = kUnknown);
    void remove_datapath(DataPathId id);
    bool is_alive(DataPathId id) const;
    ComponentId source(DataPathId id) const;
    ComponentId target(DataPathId id) const;
    DataPathType type(DataPathId id) const;
    bool oriented(DataPathId id) const;
    double bandwidth(DataPathId id) const;
    double latency(DataPathId id) const;
    void set_bandwidth(DataPathId id, double value);
    void set_latency(DataPathId id, double value);

    std::size_t datapath_count() const { return live_datapaths_; }
    std::uint32_t datapath_capacity() const { return static_cast<std::uint32_t>(datapaths_.size()); }
    template <class Fn> void for_each_datapath(Fn&& fn) const {
        for (std::uint32_t i = 0; i < datapaths_.size(); ++i)
            if (datapaths_[i].alive) fn(DataPathId{i});
    }

    // Iterates the DataPaths of one type leaving (Out) or entering (In) a
    // component, newest first. Finding the list costs a walk over the distinct
    // types present on that component, not over its paths.
    class DataPathRange {
    public:
        class Iterator {
        public:
            using value_type = DataPathId;
            using difference_type = std::ptrdiff_t;
            Iterator() = default;
            Iterator(const Model* m, std::uint32_t at, Direction d) : m_(m), at_(at), dir_(d) {}
            DataPathId operator*() const { return DataPathId{at_}; }
            Iterator& operator++();
            Iterator operator++(int) { Iterator o = *this; ++*this; return o; }
            bool operator==(const Iterator& o) const { return at_ == o.at_; }
        private:
            const Model* m_ = nullptr;
            std::uint32_t at_ = 0xffffffffu;
            Direction dir_ = Direction::Out;
        };
        DataPathRange(const Model* m, std::uint32_t head, std::uint32_t count, Direction d)
            : m_(m), head_(head), count_(count), dir_(d) {}
        Iterator begin() const { return Iterator(m_, head_, dir_); }
        Iterator end() const { return Iterator(m_, 0xffffffffu, dir_); }
        std::size_t size() const { return count_; }
        bool empty() const { return count_ == 0; }
    private:
        const Model* m_;
        std::uint32_t head_, count_;
        Direction dir_;
    };
    DataPathRange datapaths(ComponentId id, DataPathType type, Direction direction) const;
    // All DataPaths touching the component in that direction, any type.
    std::vector<DataPathId> all_datapaths(ComponentId id, Direction direction) const;
    // The distinct DataPath types present on a component in that direction.
    std::vector<DataPathType> datapath_types_on(ComponentId id, Direction direction) const;

    static constexpr double kUnknown = __builtin_nan("");

    // Approximate bytes used by the model's own arrays (capacity, not size),
    // excluding interned strings: what the benchmarks report per component.
    std::size_t memory_bytes_excluding_strings() const;

private:
    static constexpr std::uint32_t kNil = 0xffffffffu;

    // flags: kSharedAttributes when the attribute list is shared (see
    // share_attributes); the other bits are 0.
    static constexpr std::uint16_t kSharedAttributes = 1;

    struct ComponentRecord {
        ComponentType type;
        bool alive;
        std::uint16_t flags;
        std::uint32_t kind;  // index into words_ (0 = the empty string)
        std::uint32_t name;  // index into names_ (0 = empty)
        std::int32_t os_index;
        std::uint32_t parent, first_child, last_child, next_sibling, prev_sibling;
        std::uint32_t first_attr;      // index into attrs_, chained by AttrEntry::next
        std::uint32_t first_type_head; // index into type_heads_, chained
    };
    static_assert(sizeof(ComponentRecord) == 44);

    struct DataPathRecord {
        std::uint32_t source, target;
        DataPathType type;
        bool alive, oriented;
        std::uint16_t flags;
        double bandwidth, latency;
        std::uint32_t next_out, prev_out, next_in, prev_in;  // within the (component, type) lists
        std::uint32_t first_attr;
    };

    // Head of the list of one DataPath type on one component, both directions.
    struct TypeHead {
        DataPathType type;
        std::uint32_t out_head, out_count, in_head, in_count;
        std::uint32_t next;  // next TypeHead of the same component
    };

    // 16 bytes: a run of a million ranks holds some 40 million of them.
    struct AttrEntry {
        AttrKey key : 24;  // Model::key refuses a key beyond kMaxAttrKeys
        AttrKind kind : 8;
        std::uint32_t next;
        union {
            std::int64_t i;
            double f;
            struct { std::uint32_t offset, length; } span;  // into chars_ or cpuset_words_
        };
    };
    static_assert(sizeof(AttrEntry) == 16);

    // Interned strings (kinds, names, keys, user DataPath types), stored
    // pointer-free as one character blob and offsets so a snapshot can map
    // them. The name -> id index exists only for owned tables; a mapped
    // table answers find() by a scan (tables are small: keys, kinds).
    struct StringTable {
        PodArray<std::uint32_t> offsets;  // string i is blob[offsets[i], offsets[i+1])
        PodArray<char> blob;
        // Heterogeneous lookup: find a string_view without building a string.
        struct Hash {
            using is_transparent = void;
            std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
        };
        std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> index;
        // The ids of strings interned lately, by a cheap hash of their size
        // and ends: loaders intern the same few kinds over and over, and a
        // hit costs a short compare instead of hashing the whole string.
        static constexpr std::uint32_t kNoId = 0xffffffffu;
        std::array<std::uint32_t, 16> recent;
        static std::size_t recent_slot(std::string_view s) {
            return (s.size() * 31 + static_cast<unsigned char>(s.front()) * 7 +
                    static_cast<unsigned char>(s.back())) & 15;
        }
        StringTable() {
            offsets.push_back(0);
            recent.fill(kNoId);
        }
        // For a table whose strings were just replaced (a mapped snapshot's).
        void forget_lookups() {
            index.clear();
            recent.fill(kNoId);
        }
        std::uint32_t size() const { return static_cast<std::uint32_t>(offsets.size() - 1); }
        std::string_view get(std::uint32_t i) const {
            return {blob.data() + offsets[i], offsets[i + 1] - offsets[i]};
        }
        std::uint32_t intern(std::string_view s);
        std::optional<std::uint32_t> find(std::string_view s) const;
        void make_owned();
    };

    friend class DataPathRange::Iterator;
    friend struct SnapshotAccess;  // core/snapshot.cpp reads and maps the arrays

    // A model opened from a snapshot borrows its arrays from the mapping;
    // the first change copies them (copy-on-write for the whole model).
    void ensure_owned() {
        if (borrowed_) make_owned();
    }
    void make_owned();

    ComponentRecord& rec(ComponentId id) { return components_[index_of(id)]; }
    const ComponentRecord& rec(ComponentId id) const { return components_[index_of(id)]; }
    void link_child(std::uint32_t parent, std::uint32_t child, std::uint32_t before);
    void unlink_from_parent(std::uint32_t child);
    TypeHead* find_type_head(std::uint32_t component, DataPathType type);
    const TypeHead* find_type_head(std::uint32_t component, DataPathType type) const;
    TypeHead& get_or_add_type_head(std::uint32_t component, DataPathType type);
    void unlink_datapath(std::uint32_t dp);

    // Gives the owner (head, flags) a list of its own when it shares one.
    void unshare_attributes(std::uint32_t& head, std::uint16_t& flags);
    // Frees the owner's entries, unless they are shared (then only let go).
    void release_attributes(std::uint32_t& head, std::uint16_t& flags);
    AttrEntry* find_attr(std::uint32_t head, AttrKey key);
    const AttrEntry* find_attr(std::uint32_t head, AttrKey key) const;
    AttrEntry& attr_slot(std::uint32_t& head, AttrKey key);
    void store_string(AttrEntry& e, std::string_view value);
    void store_cpuset(AttrEntry& e, const Cpuset& value);
    AttributeValue value_of(const AttrEntry& e) const;
    std::string_view string_of(const AttrEntry& e) const;
    Cpuset cpuset_of(const AttrEntry& e) const;
    bool remove_attr_from(std::uint32_t& head, AttrKey key);
    void for_each_attr_in(std::uint32_t head,
                          const std::function<void(AttrKey, const AttributeValue&)>& fn) const;

    PodArray<ComponentRecord> components_;
    PodArray<DataPathRecord> datapaths_;
    PodArray<TypeHead> type_heads_;
    PodArray<AttrEntry> attrs_;
    PodArray<char> chars_;                 // attribute string values
    PodArray<std::uint64_t> cpuset_words_; // attribute cpuset values
    // Values stored lately, by a hash of their content: an equal value
    // shares their bytes instead of adding its own. Runs repeat most of
    // theirs (every node's copy of a topology has the same cpusets, every
    // thread of a runtime the same module), and chars_ and cpuset_words_ are
    // only ever appended to, so a span may be shared by many entries.
    // Derived state: a copy may keep it (the arrays are copied alike).
    struct ValueSpan {
        std::uint32_t offset = 0, length = 0xffffffffu;  // length ~0: empty slot
    };
    // On the heap, made at the first value stored: a Model stays small
    // enough for any stack (the recorder builds one at a process's start).
    static constexpr std::size_t kRecentValues = 4096;
    std::vector<ValueSpan> recent_strings_;
    std::vector<ValueSpan> recent_cpusets_;
    PodArray<std::uint32_t> by_type_[kComponentTypeCount];  // may hold dead ids
    PodArray<std::uint32_t> free_attrs_;
    // The attribute list last appended to, so that setting attributes one
    // after another on one component or DataPath (what every loader does)
    // needs no walk of its list to rule out a duplicate key: the keys below
    // 64 it holds, and its last entry. A list is known by its first entry,
    // which belongs to that list alone until an entry is freed: every place
    // that frees entries forgets the list (forget_appended_list()).
    struct AppendedList {
        std::uint32_t head = kNil, tail = kNil;
        std::uint64_t small_keys = 0;  // bit k: key k (< 64) is in the list
    } appended_;
    void forget_appended_list() { appended_ = AppendedList{}; }
    // The table run_keys() hands out. A copy or a moved-to Model builds its own.
    struct RunKeysCache {
        std::mutex mutex;                   // run_keys() may run in several threads at once
        std::optional<RunModelKeys> table;
        bool complete = false;              // every key interned (intern_run_keys)
        RunKeysCache() = default;
        RunKeysCache(const RunKeysCache&) noexcept {}
        RunKeysCache& operator=(const RunKeysCache&) noexcept {
            table.reset();
            complete = false;
            return *this;
        }
    };
    mutable RunKeysCache run_keys_cache_;
    // After a key or DataPath type is interned: a kept table that lacked it now has it.
    void refresh_run_keys() {
        if (run_keys_cache_.table && !run_keys_cache_.complete) *run_keys_cache_.table = RunModelKeys::found(*this);
    }
    StringTable words_;       // kinds and names
    StringTable keys_;        // attribute keys
    StringTable user_types_;  // user DataPath type names
    std::size_t live_components_ = 0;
    std::size_t live_datapaths_ = 0;
    // The mapped snapshot this model borrows from, kept alive while it does.
    std::shared_ptr<const void> mapping_;
    bool borrowed_ = false;  // arrays view an image (mapped or in memory)
};

}  // namespace stacksage
