// hwloc topology -> Model. See hwloc_convert.hpp for the mapping.
#include "parsers/hwloc_convert.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace stacksage {
namespace {

// hwloc's virtual depths of the special levels (NUMA, I/O, Misc, MemCache),
// from -3 down to HWLOC_TYPE_DEPTH_MEMCACHE.
constexpr int kFirstSpecialDepth = HWLOC_TYPE_DEPTH_NUMANODE;
constexpr int kLastSpecialDepth = HWLOC_TYPE_DEPTH_MEMCACHE;
constexpr int kSpecialDepthCount = kFirstSpecialDepth - kLastSpecialDepth + 1;

// The integer in an enum field of an hwloc object. hwloc copies what an XML
// file says into these fields unchecked (the fuzzer gave a bridge type of 2,
// an OS device type of 8): loading such a value as the enum is undefined
// behaviour, so its bytes are read as the integer they hold. Values hwloc
// does not define then take the default branch of each switch below.
template <class Enum>
unsigned raw_value(const Enum& field) {
    static_assert(std::is_enum_v<Enum>);
    std::underlying_type_t<Enum> value;
    std::memcpy(&value, &field, sizeof value);
    return static_cast<unsigned>(value);
}

std::string_view cache_kind_name(unsigned type) {
    switch (type) {
    case HWLOC_OBJ_CACHE_DATA: return "data";
    case HWLOC_OBJ_CACHE_INSTRUCTION: return "instruction";
    default: return "unified";
    }
}

class Converter {
public:
    Converter(Model& model, hwloc_topology_t topology, const HwlocLoadOptions& options)
        : model_(model), topo_(topology), options_(options) {
        // Interned once: Model::key() hashes a string on every call.
        job_restricted_ = model_.key(kJobRestrictedKey);
        pci_vendor_id_ = model_.key("pci_vendor_id");
        pci_device_id_ = model_.key("pci_device_id");
        pci_class_id_ = model_.key("pci_class_id");
        build_object_table();
        hwloc_obj_t root = hwloc_get_root_obj(topo_);
        clip_cpuset_ = root->complete_cpuset ? root->complete_cpuset : root->cpuset;
        clip_nodeset_ = root->complete_nodeset ? root->complete_nodeset : root->nodeset;
    }

    ComponentId run(ComponentId parent) {
        hwloc_obj_t root = hwloc_get_root_obj(topo_);
        ComponentId node = convert_subtree(root, parent);
        describe_node(root, node);
        add_cpukinds();
        add_distances();
        add_memattrs();
        return node;
    }

private:
    // ---- hwloc object -> component id --------------------------------------
    // A flat table indexed by (level, logical index): hwloc numbers objects
    // densely per level, so no hash map and no use of obj->userdata (which
    // belongs to whoever owns the topology).
    void build_object_table() {
        normal_depth_count_ = hwloc_topology_get_depth(topo_);
        const int slots = normal_depth_count_ + kSpecialDepthCount;
        level_offset_.assign(static_cast<std::size_t>(slots) + 1, 0);
        std::uint32_t total = 0;
        for (int slot = 0; slot < slots; ++slot) {
            level_offset_[static_cast<std::size_t>(slot)] = total;
            total += static_cast<std::uint32_t>(hwloc_get_nbobjs_by_depth(topo_, depth_of_slot(slot)));
        }
        level_offset_[static_cast<std::size_t>(slots)] = total;
        ids_.assign(total, kNoComponent);
    }
    int depth_of_slot(int slot) const {
        return slot < normal_depth_count_ ? slot : kFirstSpecialDepth - (slot - normal_depth_count_);
    }
    // Index into ids_, or -1 for an object hwloc does not list in a level.
    long table_index(hwloc_obj_t obj) const {
        int slot;
        if (obj->depth >= 0 && obj->depth < normal_depth_count_)
            slot = obj->depth;
        else if (obj->depth <= kFirstSpecialDepth && obj->depth >= kLastSpecialDepth)
            slot = normal_depth_count_ + (kFirstSpecialDepth - obj->depth);
        else
            return -1;
        const std::uint32_t begin = level_offset_[static_cast<std::size_t>(slot)];
        const std::uint32_t end = level_offset_[static_cast<std::size_t>(slot) + 1];
        if (obj->logical_index >= end - begin) return -1;
        return static_cast<long>(begin + obj->logical_index);
    }
    ComponentId component_of(hwloc_obj_t obj) const {
        if (!obj) return kNoComponent;
        const long at = table_index(obj);
        return at < 0 ? kNoComponent : ids_[static_cast<std::size_t>(at)];
    }

    // ---- tree ----------------------------------------------------------------
    // Recursion depth is the tree depth (tens), never the object count.
    ComponentId convert_subtree(hwloc_obj_t obj, ComponentId parent) {
        const ComponentId id = add_object(obj, parent);
        // Memory children first: they are what sys-sage mixed up with caches.
        for (hwloc_obj_t c = obj->memory_first_child; c; c = c->next_sibling) convert_subtree(c, id);
        for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling) convert_subtree(c, id);
        if (options_.include_io)
            for (hwloc_obj_t c = obj->io_first_child; c; c = c->next_sibling) convert_subtree(c, id);
        for (hwloc_obj_t c = obj->misc_first_child; c; c = c->next_sibling) convert_subtree(c, id);
        return id;
    }

    struct Shape {
        ComponentType type;
        std::string_view kind;
    };

    static Shape shape_of(hwloc_obj_t obj) {
        switch (obj->type) {
        case HWLOC_OBJ_MACHINE: return {ComponentType::Node, {}};
        case HWLOC_OBJ_PACKAGE: return {ComponentType::Chip, "package"};
        case HWLOC_OBJ_DIE: return {ComponentType::Subdivision, "die"};
        case HWLOC_OBJ_GROUP: return {ComponentType::Subdivision, "group"};
        case HWLOC_OBJ_NUMANODE:
            return {ComponentType::Numa, obj->subtype ? std::string_view(obj->subtype) : std::string_view{}};
        case HWLOC_OBJ_MEMCACHE: return {ComponentType::Memory, "memory-side-cache"};
        case HWLOC_OBJ_L1CACHE: case HWLOC_OBJ_L2CACHE: case HWLOC_OBJ_L3CACHE:
        case HWLOC_OBJ_L4CACHE: case HWLOC_OBJ_L5CACHE: case HWLOC_OBJ_L1ICACHE:
        case HWLOC_OBJ_L2ICACHE: case HWLOC_OBJ_L3ICACHE:
            return {ComponentType::Cache, cache_level_name(obj)};
        case HWLOC_OBJ_CORE: return {ComponentType::Core, {}};
        case HWLOC_OBJ_PU: return {ComponentType::Thread, {}};
        case HWLOC_OBJ_BRIDGE:
            return {ComponentType::Generic,
                    raw_value(obj->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_HOST ? "host-bridge" : "pci-bridge"};
        case HWLOC_OBJ_PCI_DEVICE: return {ComponentType::Generic, "pci-device"};
        case HWLOC_OBJ_OS_DEVICE:
            switch (raw_value(obj->attr->osdev.type)) {
            case HWLOC_OBJ_OSDEV_GPU: return {ComponentType::Chip, "gpu"};
            case HWLOC_OBJ_OSDEV_COPROC: return {ComponentType::Chip, "coproc"};
            case HWLOC_OBJ_OSDEV_NETWORK: return {ComponentType::Chip, "nic"};
            case HWLOC_OBJ_OSDEV_OPENFABRICS: return {ComponentType::Chip, "openfabrics"};
            case HWLOC_OBJ_OSDEV_BLOCK: return {ComponentType::Storage, "block"};
            case HWLOC_OBJ_OSDEV_DMA: return {ComponentType::Generic, "dma"};
            default: return {ComponentType::Generic, "os-device"};
            }
        case HWLOC_OBJ_MISC: return {ComponentType::Generic, "misc"};
        default: return {ComponentType::Generic, {}};
        }
    }

    // "L1d", "L1i", "L2", as hwloc names caches (d: data, i: instruction,
    // nothing: unified). A table, not snprintf: this runs for most objects.
    static std::string_view cache_level_name(hwloc_obj_t obj) {
        static constexpr std::string_view names[5][3] = {
            {"L1", "L1d", "L1i"}, {"L2", "L2d", "L2i"}, {"L3", "L3d", "L3i"},
            {"L4", "L4d", "L4i"}, {"L5", "L5d", "L5i"}};
        const auto& c = obj->attr->cache;
        const unsigned raw = raw_value(c.type);
        const unsigned type = raw == HWLOC_OBJ_CACHE_DATA ? 1 : raw == HWLOC_OBJ_CACHE_INSTRUCTION ? 2 : 0;
        if (c.depth >= 1 && c.depth <= 5) return names[c.depth - 1][type];
        return "cache";
    }

    ComponentId add_object(hwloc_obj_t obj, ComponentId parent) {
        const Shape shape = shape_of(obj);
        const std::int64_t os_index =
            obj->os_index == HWLOC_UNKNOWN_INDEX ? -1 : static_cast<std::int64_t>(obj->os_index);
        const ComponentId id = model_.add_component(shape.type, parent, shape.kind,
                                                    obj->name ? obj->name : "", os_index);
        const long at = table_index(obj);
        if (at >= 0) ids_[static_cast<std::size_t>(at)] = id;

        model_.set_attr(id, keys::hwloc_type, std::string_view(hwloc_obj_type_string(obj->type)));
        model_.set_attr(id, keys::logical_index, static_cast<std::int64_t>(obj->logical_index));
        if (obj->subtype) model_.set_attr(id, keys::subtype, std::string_view(obj->subtype));

        switch (obj->type) {
        case HWLOC_OBJ_NUMANODE:
            model_.set_attr(id, keys::size_bytes, static_cast<std::int64_t>(obj->attr->numanode.local_memory));
            break;
        case HWLOC_OBJ_PCI_DEVICE:
            add_pci(id, obj->attr->pcidev);
            break;
        case HWLOC_OBJ_BRIDGE:
            if (raw_value(obj->attr->bridge.upstream_type) == HWLOC_OBJ_BRIDGE_PCI)
                add_pci(id, obj->attr->bridge.upstream.pci);
            break;
        case HWLOC_OBJ_MEMCACHE:
            add_cache(id, obj->attr->cache);
            break;
        default:
            if (hwloc_obj_type_is_cache(obj->type)) add_cache(id, obj->attr->cache);
            break;
        }

        if (obj->cpuset) {
            const Cpuset& cpuset = cpusets_.convert(obj->cpuset, clip_cpuset_);
            model_.set_attr(id, keys::cpuset, cpuset);
            if (obj->complete_cpuset) {
                // Usually equal: reuse the conversion instead of redoing it.
                model_.set_attr(id, keys::complete_cpuset,
                                hwloc_bitmap_isequal(obj->complete_cpuset, obj->cpuset)
                                    ? cpuset
                                    : complete_cpusets_.convert(obj->complete_cpuset, clip_cpuset_));
            }
        }
        if (obj->nodeset) model_.set_attr(id, keys::nodeset, nodesets_.convert(obj->nodeset, clip_nodeset_));

        for (unsigned i = 0; i < obj->infos_count; ++i) {
            const hwloc_info_s& info = obj->infos[i];
            if (!info.name || !info.value) continue;
            model_.set_attr(id, model_.key(info.name), std::string_view(info.value));
        }
        return id;
    }

    void add_cache(ComponentId id, const hwloc_obj_attr_u::hwloc_cache_attr_s& c) {
        model_.set_attr(id, keys::cache_level, static_cast<std::int64_t>(c.depth));
        model_.set_attr(id, keys::cache_kind, cache_kind_name(raw_value(c.type)));
        model_.set_attr(id, keys::size_bytes, static_cast<std::int64_t>(c.size));
        model_.set_attr(id, keys::line_size, static_cast<std::int64_t>(c.linesize));
        model_.set_attr(id, keys::associativity, static_cast<std::int64_t>(c.associativity));
    }

    void add_pci(ComponentId id, const hwloc_obj_attr_u::hwloc_pcidev_attr_s& p) {
        char busid[32];
        const int n = std::snprintf(busid, sizeof busid, "%04x:%02x:%02x.%01x",
                                    static_cast<unsigned>(p.domain), p.bus, p.dev, p.func);
        model_.set_attr(id, keys::pci_busid,
                        std::string_view(busid, n > 0 ? std::min<std::size_t>(static_cast<std::size_t>(n), sizeof busid - 1) : 0));
        model_.set_attr(id, pci_vendor_id_, static_cast<std::int64_t>(p.vendor_id));
        model_.set_attr(id, pci_device_id_, static_cast<std::int64_t>(p.device_id));
        model_.set_attr(id, pci_class_id_, static_cast<std::int64_t>(p.class_id));
    }

    // ---- bitmaps -------------------------------------------------------------
    // Converts hwloc bitmaps, remembering the last one: consecutive objects
    // (L2, L1d, L1i, Core, PU of one core; every nodeset under one NUMA
    // node) mostly share their sets, so most conversions are one comparison.
    class BitmapConverter {
    public:
        const Cpuset& convert(hwloc_const_bitmap_t bitmap, hwloc_const_bitmap_t clip) {
            if (last_ && hwloc_bitmap_isequal(bitmap, last_)) return set_;
            last_ = bitmap;
            to_cpuset(bitmap, clip);
            return set_;
        }

    private:
        void to_cpuset(hwloc_const_bitmap_t bitmap, hwloc_const_bitmap_t clip) {
            int words = hwloc_bitmap_nr_ulongs(bitmap);
            if (words < 0) {
                // Infinite ("all PUs from N on"): never iterate it; keep what the
                // machine has, or, lacking a finite machine set, the finite part.
                if (clip && hwloc_bitmap_nr_ulongs(clip) >= 0) {
                    hwloc_bitmap_t clipped = hwloc_bitmap_alloc();
                    hwloc_bitmap_and(clipped, bitmap, clip);
                    to_cpuset(clipped, nullptr);
                    hwloc_bitmap_free(clipped);
                    return;
                }
                const int last_unset = hwloc_bitmap_last_unset(bitmap);
                words = last_unset < 0 ? 1 : last_unset / (8 * static_cast<int>(sizeof(unsigned long))) + 1;
            }
            static_assert(sizeof(unsigned long) <= sizeof(std::uint64_t));
            constexpr unsigned per_word = sizeof(std::uint64_t) / sizeof(unsigned long);
            words_.assign((static_cast<std::size_t>(words) + per_word - 1) / per_word, 0);
            for (int i = 0; i < words; ++i) {
                const std::uint64_t part = hwloc_bitmap_to_ith_ulong(bitmap, static_cast<unsigned>(i));
                words_[static_cast<std::size_t>(i) / per_word] |=
                    part << (8 * sizeof(unsigned long) * (static_cast<unsigned>(i) % per_word));
            }
            set_ = Cpuset::from_words(words_);
        }

        hwloc_const_bitmap_t last_ = nullptr;  // still owned by its hwloc object
        std::vector<std::uint64_t> words_;
        Cpuset set_;
    };

    // ---- Node ----------------------------------------------------------------
    void describe_node(hwloc_obj_t root, ComponentId node) {
        std::string_view host = options_.hostname;
        if (host.empty()) {
            const char* info = hwloc_obj_get_info_by_name(root, "HostName");
            if (info) host = info;
        }
        if (!host.empty()) {
            model_.set_attr(node, keys::hostname, host);
            model_.set_name(node, host);
        }
        const bool restricted = root->cpuset && root->complete_cpuset &&
                                !hwloc_bitmap_isequal(root->cpuset, root->complete_cpuset);
        model_.set_attr(node, job_restricted_, static_cast<std::int64_t>(restricted ? 1 : 0));
    }

    // ---- CPU kinds -----------------------------------------------------------
    void add_cpukinds() {
        const int kinds = hwloc_cpukinds_get_nr(topo_, 0);
        if (kinds <= 0) return;
        const int pu_depth = hwloc_get_type_depth(topo_, HWLOC_OBJ_PU);
        const int pus = hwloc_get_nbobjs_by_depth(topo_, pu_depth);
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        for (int k = 0; k < kinds; ++k) {
            int efficiency = -1;
            unsigned nr_infos = 0;
            hwloc_info_s* infos = nullptr;
            if (hwloc_cpukinds_get_info(topo_, static_cast<unsigned>(k), set, &efficiency, &nr_infos, &infos, 0) < 0)
                continue;
            // One pass over the PU level per kind: a handful of kinds at most,
            // and no per-PU lookup by os_index (linear in hwloc).
            ComponentId last_core = kNoComponent;
            for (int i = 0; i < pus; ++i) {
                hwloc_obj_t pu = hwloc_get_obj_by_depth(topo_, pu_depth, static_cast<unsigned>(i));
                if (!hwloc_bitmap_isset(set, pu->os_index)) continue;
                label_cpukind(component_of(pu), k, efficiency, nr_infos, infos);
                const ComponentId core = component_of(hwloc_get_ancestor_obj_by_type(topo_, HWLOC_OBJ_CORE, pu));
                if (core != kNoComponent && core != last_core) {
                    label_cpukind(core, k, efficiency, nr_infos, infos);
                    last_core = core;
                }
            }
        }
        hwloc_bitmap_free(set);
    }

    void label_cpukind(ComponentId id, int kind, int efficiency, unsigned nr_infos, const hwloc_info_s* infos) {
        if (id == kNoComponent) return;
        model_.set_attr(id, keys::cpukind, static_cast<std::int64_t>(kind));
        model_.set_attr(id, keys::cpukind_efficiency, static_cast<std::int64_t>(efficiency));
        for (unsigned i = 0; i < nr_infos; ++i) {
            if (!infos[i].name || !infos[i].value) continue;
            const std::string_view name = infos[i].name;
            const AttrKey key = name == "CoreType" ? keys::core_type : model_.key(name);
            model_.set_attr(id, key, std::string_view(infos[i].value));
        }
    }

    // ---- distances -----------------------------------------------------------
    void add_distances() {
        unsigned nr = 0;
        if (hwloc_distances_get(topo_, &nr, nullptr, 0, 0) < 0 || nr == 0) return;
        std::vector<hwloc_distances_s*> matrices(nr, nullptr);
        if (hwloc_distances_get(topo_, &nr, matrices.data(), 0, 0) < 0) return;
        matrices.resize(std::min<std::size_t>(nr, matrices.size()));
        for (hwloc_distances_s* d : matrices) {
            if (!d) continue;
            add_distance_matrix(*d, hwloc_distances_get_name(topo_, d));
            hwloc_distances_release(topo_, d);
        }
    }

    void add_distance_matrix(const hwloc_distances_s& d, const char* raw_name) {
        const std::string_view name = raw_name ? raw_name : "";
        const bool gpu_link = name.starts_with("NVLink") || name.starts_with("XGMI") || name.starts_with("XeLink");
        const bool is_latency = d.kind & HWLOC_DISTANCES_KIND_MEANS_LATENCY;
        const bool is_bandwidth = d.kind & HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH;
        std::string_view unit;
        if (name == "NUMALatency") unit = "relative";
        else if (name.ends_with("Bandwidth") && gpu_link) unit = "MB/s";
        const DataPathType type = gpu_link ? DataPathType::GpuLink : DataPathType::NumaDistance;

        const unsigned n = d.nbobjs;
        std::vector<ComponentId> ends(n);
        for (unsigned i = 0; i < n; ++i) ends[i] = component_of(d.objs[i]);
        for (unsigned i = 0; i < n; ++i) {
            if (ends[i] == kNoComponent) continue;
            for (unsigned j = 0; j < n; ++j) {
                if (i == j || ends[j] == kNoComponent) continue;
                const hwloc_uint64_t v = d.values[static_cast<std::size_t>(i) * n + j];
                if (is_bandwidth && v == 0) continue;  // no link
                const double dv = static_cast<double>(v);
                const DataPathId p = model_.add_datapath(ends[i], ends[j], type, true,
                                                         is_bandwidth ? dv : Model::kUnknown,
                                                         is_latency ? dv : Model::kUnknown);
                model_.set_attr(p, keys::distance_name, name);
                model_.set_attr(p, keys::value, static_cast<std::int64_t>(v));
                if (!unit.empty()) model_.set_attr(p, keys::unit, unit);
            }
        }
    }

    // ---- memory attributes ---------------------------------------------------
    void add_memattrs() {
        for (hwloc_memattr_id_t id = 0;; ++id) {
            const char* raw_name = nullptr;
            if (hwloc_memattr_get_name(topo_, id, &raw_name) < 0) break;
            unsigned long flags = 0;
            hwloc_memattr_get_flags(topo_, id, &flags);
            const std::string_view name = raw_name ? raw_name : "";
            if (flags & HWLOC_MEMATTR_FLAG_NEED_INITIATOR)
                add_memattr_paths(id, name);
            else if (id != HWLOC_MEMATTR_ID_CAPACITY && id != HWLOC_MEMATTR_ID_LOCALITY)
                add_memattr_values(id, name);
        }
    }

    std::vector<hwloc_obj_t> memattr_targets(hwloc_memattr_id_t id, std::vector<hwloc_uint64_t>& values) {
        unsigned nr = 0;
        if (hwloc_memattr_get_targets(topo_, id, nullptr, 0, &nr, nullptr, nullptr) < 0 || nr == 0) return {};
        std::vector<hwloc_obj_t> targets(nr);
        values.assign(nr, 0);
        if (hwloc_memattr_get_targets(topo_, id, nullptr, 0, &nr, targets.data(), values.data()) < 0) return {};
        targets.resize(std::min<std::size_t>(nr, targets.size()));
        return targets;
    }

    void add_memattr_values(hwloc_memattr_id_t id, std::string_view name) {
        std::vector<hwloc_uint64_t> values;
        const std::vector<hwloc_obj_t> targets = memattr_targets(id, values);
        if (targets.empty()) return;
        const AttrKey key = model_.key(name);
        for (std::size_t t = 0; t < targets.size(); ++t) {
            const ComponentId target = component_of(targets[t]);
            if (target != kNoComponent) model_.set_attr(target, key, static_cast<std::int64_t>(values[t]));
        }
    }

    void add_memattr_paths(hwloc_memattr_id_t id, std::string_view name) {
        const bool is_bandwidth = id == HWLOC_MEMATTR_ID_BANDWIDTH || id == HWLOC_MEMATTR_ID_READ_BANDWIDTH ||
                                  id == HWLOC_MEMATTR_ID_WRITE_BANDWIDTH;
        const bool is_latency = id == HWLOC_MEMATTR_ID_LATENCY || id == HWLOC_MEMATTR_ID_READ_LATENCY ||
                                id == HWLOC_MEMATTR_ID_WRITE_LATENCY;
        const std::string_view unit = is_bandwidth ? "MiB/s" : is_latency ? "ns" : "";
        std::vector<hwloc_uint64_t> unused;
        const std::vector<hwloc_obj_t> targets = memattr_targets(id, unused);
        std::vector<hwloc_location> initiators;
        std::vector<hwloc_uint64_t> values;
        for (hwloc_obj_t target_obj : targets) {
            const ComponentId target = component_of(target_obj);
            if (target == kNoComponent) continue;
            unsigned nr = 0;
            if (hwloc_memattr_get_initiators(topo_, id, target_obj, 0, &nr, nullptr, nullptr) < 0 || nr == 0)
                continue;
            initiators.resize(nr);
            values.assign(nr, 0);
            if (hwloc_memattr_get_initiators(topo_, id, target_obj, 0, &nr, initiators.data(), values.data()) < 0)
                continue;
            nr = std::min<unsigned>(nr, static_cast<unsigned>(initiators.size()));
            for (unsigned i = 0; i < nr; ++i) {
                const ComponentId source = initiator_component(initiators[i]);
                if (source == kNoComponent) continue;
                const double v = static_cast<double>(values[i]);
                const DataPathId p = model_.add_datapath(source, target, DataPathType::MemoryAttribute, true,
                                                         is_bandwidth ? v : Model::kUnknown,
                                                         is_latency ? v : Model::kUnknown);
                model_.set_attr(p, keys::memattr_name, name);
                model_.set_attr(p, keys::value, static_cast<std::int64_t>(values[i]));
                if (!unit.empty()) model_.set_attr(p, keys::unit, unit);
            }
        }
    }

    ComponentId initiator_component(const hwloc_location& where) {
        if (where.type == HWLOC_LOCATION_TYPE_OBJECT) return component_of(where.location.object);
        if (where.type != HWLOC_LOCATION_TYPE_CPUSET || !where.location.cpuset) return kNoComponent;
        // hwloc gives the deepest covering object; climb to the highest one
        // with the same cpuset (the Package, not its only L3).
        hwloc_obj_t obj = hwloc_get_obj_covering_cpuset(topo_, where.location.cpuset);
        if (!obj) return kNoComponent;
        while (obj->parent && obj->parent->cpuset && hwloc_bitmap_isequal(obj->parent->cpuset, obj->cpuset))
            obj = obj->parent;
        return component_of(obj);
    }

    Model& model_;
    hwloc_topology_t topo_;
    const HwlocLoadOptions& options_;
    AttrKey job_restricted_ = 0, pci_vendor_id_ = 0, pci_device_id_ = 0, pci_class_id_ = 0;
    int normal_depth_count_ = 0;
    std::vector<std::uint32_t> level_offset_;
    std::vector<ComponentId> ids_;
    hwloc_const_bitmap_t clip_cpuset_ = nullptr;
    hwloc_const_bitmap_t clip_nodeset_ = nullptr;
    BitmapConverter cpusets_, complete_cpusets_, nodesets_;
};

}  // namespace

Result<ComponentId> add_hwloc_topology(Model& model, hwloc_topology_t topology, ComponentId parent,
                                       const HwlocLoadOptions& options) {
    if (!topology) return make_error("add_hwloc_topology: no hwloc topology was given");
    if (parent != kNoComponent && (index_of(parent) >= model.component_capacity() || !model.is_alive(parent)))
        return make_error("add_hwloc_topology: parent component " + std::to_string(index_of(parent)) +
                          " is not a live component of the model; pass an existing component or kNoComponent");
    // hwloc takes whatever object an XML file puts first as the root (the
    // fuzzer gave it a Package); a machine's topology has a Machine there.
    hwloc_obj_t root = hwloc_get_root_obj(topology);
    if (!root) return make_error("the hwloc topology has no root object (was hwloc_topology_load() called?)");
    if (root->type != HWLOC_OBJ_MACHINE)
        return make_error(std::string("its root object is a ") + hwloc_obj_type_string(root->type) +
                          ", not a Machine: it is not the topology of a machine");
    // Size the model once: its component and attribute arrays then never
    // reallocate during the load (each reallocation copied the attributes
    // made so far). Per object: type, logical index, the three sets, a
    // subtype, five cache fields, and its infos; an upper bound.
    std::size_t objects = 0, attributes = 0;
    auto count_level = [&](int d) {
        for (hwloc_obj_t o = hwloc_get_next_obj_by_depth(topology, d, nullptr); o;
             o = hwloc_get_next_obj_by_depth(topology, d, o)) {
            ++objects;
            attributes += 11 + o->infos_count;
        }
    };
    const int depth = hwloc_topology_get_depth(topology);
    for (int d = 0; d < depth; ++d) count_level(d);
    for (int d : {HWLOC_TYPE_DEPTH_NUMANODE, HWLOC_TYPE_DEPTH_MEMCACHE, HWLOC_TYPE_DEPTH_MISC,
                  HWLOC_TYPE_DEPTH_BRIDGE, HWLOC_TYPE_DEPTH_PCI_DEVICE, HWLOC_TYPE_DEPTH_OS_DEVICE})
        count_level(d);
    model.reserve(objects + 1, 0, attributes);
    Converter converter(model, topology, options);
    return converter.run(parent);
}

}  // namespace stacksage
