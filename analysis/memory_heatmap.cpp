#include "analysis/memory_heatmap.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>

#include "core/memory_level.hpp"
#include "core/parallel_for.hpp"
#include "core/run_model_schema.hpp"
#include "core/sample_backend.hpp"

#include <tuple>

namespace stacksage {

namespace {

// Backends in SampleBackend's order; unknown ones last.
std::size_t backend_rank(std::string_view b) {
    const std::optional<SampleBackend> known = sample_backend_from_string(b);
    return known ? static_cast<std::size_t>(*known) : kSampleBackendCount;
}

void add_once(std::vector<std::string>& v, std::string_view name) {
    if (std::find(v.begin(), v.end(), name) == v.end()) v.emplace_back(name);
}

FirstTouchLocality first_touch_locality(const NodeMemoryHeatmap& h) {
    if (h.first_touch_samples == 0) return FirstTouchLocality::None;
    if (h.numa_nodes == 1) return FirstTouchLocality::SingleNumaNode;
    if (h.first_touch_unresolved == h.first_touch_samples) return FirstTouchLocality::Unresolved;
    return h.first_touch_remote > 0 ? FirstTouchLocality::PartlyRemote : FirstTouchLocality::Local;
}

std::int64_t int_attr(const Model& m, DataPathId dp, Key<std::int64_t> k) { return m.get(dp, k).value_or(0); }

void add_target(const Model& m, std::vector<HeatmapLevel::Target>& v, ComponentId c, std::uint64_t n) {
    for (auto& t : v)
        if (t.id == c) {
            t.samples += n;
            return;
        }
    HeatmapLevel::Target t;
    t.id = c;
    t.type = m.type(c);
    t.kind = std::string(m.kind(c));
    t.os_index = m.os_index(c);
    t.logical_index = m.get_int(c, keys::logical_index).value_or(-1);
    t.samples = n;
    v.push_back(std::move(t));
}

void add_numa(std::vector<std::pair<std::int64_t, std::uint64_t>>& v, std::int64_t numa, std::uint64_t n) {
    if (n == 0) return;  // a node with no pages has no share to show
    for (auto& [id, count] : v)
        if (id == numa) {
            count += n;
            return;
        }
    v.emplace_back(numa, n);
}

// Rows of sites or objects, keyed by label, before the levels' order is known.
struct RowSums {
    std::string detail;
    std::map<std::string, std::uint64_t> per_level;
    std::uint64_t accesses = 0, first_touch = 0, first_touch_remote = 0;
};

// The rows, most samples first, at most kHeatmapTopRows; returns the samples of those left out.
std::uint64_t finish_rows(std::map<std::string, RowSums>& sums, const std::vector<HeatmapLevel>& levels,
                          std::vector<HeatmapCodeRow>& out) {
    for (auto& [label, r] : sums) {
        HeatmapCodeRow row;
        row.label = label;
        row.detail = std::move(r.detail);
        for (const HeatmapLevel& l : levels) row.per_level.push_back(r.per_level[l.level]);
        row.accesses = r.accesses;
        row.first_touch = r.first_touch;
        row.first_touch_remote = r.first_touch_remote;
        out.push_back(std::move(row));
    }
    std::stable_sort(out.begin(), out.end(), [](const HeatmapCodeRow& a, const HeatmapCodeRow& b) {
        return a.total() > b.total();
    });
    std::uint64_t left_out = 0;
    for (std::size_t i = kHeatmapTopRows; i < out.size(); ++i) left_out += out[i].total();
    if (out.size() > kHeatmapTopRows) out.resize(kHeatmapTopRows);
    return left_out;
}

std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> top_rows(
    const std::vector<HeatmapCodeRow>& rows, std::size_t n, const std::function<std::uint64_t(const HeatmapCodeRow&)>& of) {
    std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> out;
    for (const HeatmapCodeRow& r : rows)
        if (const std::uint64_t v = of(r); v > 0) out.emplace_back(&r, v);
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (out.size() > n) out.resize(n);
    return out;
}

}  // namespace

std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> top_sites_of_level(const NodeMemoryHeatmap& h,
                                                                                std::size_t level, std::size_t n) {
    return top_rows(h.sites, n, [&](const HeatmapCodeRow& r) { return level < r.per_level.size() ? r.per_level[level] : 0; });
}

std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>> top_first_touch_sites(const NodeMemoryHeatmap& h,
                                                                                   std::size_t n) {
    return top_rows(h.sites, n, [](const HeatmapCodeRow& r) { return r.first_touch; });
}

std::string_view to_string(FirstTouchLocality locality) {
    switch (locality) {
    case FirstTouchLocality::None: return "none";
    case FirstTouchLocality::SingleNumaNode: return "single_numa_node";
    case FirstTouchLocality::Local: return "local";
    case FirstTouchLocality::PartlyRemote: return "partly_remote";
    case FirstTouchLocality::Unresolved: return "unresolved";
    }
    return "none";
}

int memory_level_rank(std::string_view level) {
    const std::optional<MemoryLevel> known = memory_level_from_string(level);
    return known ? static_cast<int>(*known) : -1;
}

namespace {

// The heatmap of one Node (empty() when it has no memory samples).
NodeMemoryHeatmap node_memory_heatmap(const Model& m, const RunModelKeys& k, ComponentId node) {
    NodeMemoryHeatmap h;
    h.node = node;
    h.host = std::string(m.get_string(node, keys::hostname).value_or(m.name(node)));
    h.pus = m.descendants_of_type(node, ComponentType::Thread);
    for (ComponentId pu : h.pus) h.pu_os.push_back(m.os_index(pu));
    h.cores = m.descendants_of_type(node, ComponentType::Core);
    h.numa_nodes = m.descendants_of_type(node, ComponentType::Numa).size();
    std::unordered_map<std::uint32_t, std::size_t> pu_index, core_index;
    for (std::size_t i = 0; i < h.cores.size(); ++i) core_index[index_of(h.cores[i])] = i;
    h.core_of_pu.assign(h.pus.size(), static_cast<std::size_t>(-1));
    for (std::size_t i = 0; i < h.pus.size(); ++i) {
        pu_index[index_of(h.pus[i])] = i;
        const ComponentId core = m.ancestor_of_type(h.pus[i], ComponentType::Core);
        if (core != kNoComponent) h.core_of_pu[i] = core_index[index_of(core)];
    }
    h.first_touch_per_pu.assign(h.pus.size(), 0);
    std::map<int, HeatmapLevel> levels;
    std::map<std::string, std::uint64_t> papi;
    std::map<std::string, double> weight_by_level;
    std::map<std::string, std::uint64_t> by_backend;
    std::map<std::string, RowSums> sites, objects;
    // A path's samples on its site's and object's rows.
    const auto attribute = [&](DataPathId dp, std::string_view level, std::uint64_t count, bool first_touch,
                               bool remote) {
        const std::string_view site = m.get(dp, k.site).value_or("");
        const std::string_view object = m.get(dp, k.object).value_or("");
        if (site.empty()) h.samples_without_site += count;
        for (auto [label, rows, detail] : {std::tuple{site, &sites, m.get(dp, k.call_path).value_or("")},
                                           std::tuple{object, &objects, m.get(dp, k.object_kind).value_or("")}}) {
            if (label.empty()) continue;
            RowSums& r = (*rows)[std::string(label)];
            if (r.detail.empty()) r.detail = std::string(detail);
            if (first_touch) {
                r.first_touch += count;
                if (remote) r.first_touch_remote += count;
            } else {
                r.per_level[std::string(level)] += count;
                r.accesses += count;
            }
        }
    };
    for (std::size_t i = 0; i < h.pus.size(); ++i) {
        // Where threads ran (cpu-clock): not memory, but samples this node delivered.
        for (DataPathId dp : m.datapaths(h.pus[i], DataPathType::RanOn, Direction::In))
            if (m.get(dp, k.backend).value_or("") == to_string(SampleBackend::Cpuclock))
                by_backend[std::string(to_string(SampleBackend::Cpuclock))] += static_cast<std::uint64_t>(m.get_int(dp, keys::count).value_or(0));
        for (DataPathId dp : m.datapaths(h.pus[i], DataPathType::MemoryAccess, Direction::Out)) {
            const std::string_view backend = m.get(dp, k.backend).value_or("");
            const std::string_view level = m.get(dp, k.level).value_or("unknown");
            const std::uint64_t count = static_cast<std::uint64_t>(m.get_int(dp, keys::count).value_or(0));
            const bool remote = int_attr(m, dp, k.remote) != 0;
            if (backend == to_string(SampleBackend::Papi)) {
                papi[std::string(level)] += static_cast<std::uint64_t>(int_attr(m, dp, k.misses));
                continue;
            }
            by_backend[std::string(backend)] += count;
            if (backend == to_string(SampleBackend::Pagefault)) {
                h.first_touch_samples += count;
                if (remote) h.first_touch_remote += count;
                h.first_touch_per_pu[i] += count;
                attribute(dp, level, count, true, remote);
                // Pages the lookup did not find go to the Node (memory_access_paths.hpp).
                if (m.type(m.target(dp)) == ComponentType::Numa)
                    add_numa(h.first_touch_per_numa, m.os_index(m.target(dp)), count);
                else
                    h.first_touch_unresolved += count;
                continue;
            }
            add_once(h.access_backends, backend);
            const int rank = memory_level_rank(level);
            HeatmapLevel& l = levels[rank < 0 ? 1000 : rank];
            if (l.level.empty()) {
                l.level = std::string(level);
                l.per_pu.assign(h.pus.size(), 0);
                l.per_core.assign(h.cores.size(), 0);
            }
            l.samples += count;
            l.loads += static_cast<std::uint64_t>(int_attr(m, dp, k.loads));
            l.stores += static_cast<std::uint64_t>(int_attr(m, dp, k.stores));
            if (remote) l.remote += count;
            l.per_pu[i] += count;
            if (h.core_of_pu[i] < l.per_core.size()) l.per_core[h.core_of_pu[i]] += count;
            add_target(m, l.per_target, m.target(dp), count);
            weight_by_level[l.level] += static_cast<double>(int_attr(m, dp, k.weight_sum));
            h.access_samples += count;
            attribute(dp, l.level, count, false, remote);
        }
    }
    for (auto& [rank, l] : levels) {
        l.share = h.access_samples ? static_cast<double>(l.samples) / static_cast<double>(h.access_samples) : 0;
        const double w = weight_by_level[l.level];
        if (w > 0 && l.samples > 0) l.mean_latency = w / static_cast<double>(l.samples);
        std::sort(l.per_target.begin(), l.per_target.end(),
                  [](const auto& a, const auto& b) { return a.samples > b.samples; });
        h.levels.push_back(std::move(l));
    }
    for (auto& [level, n] : papi) h.papi_misses.emplace_back(level, n);
    h.sites_left_out = finish_rows(sites, h.levels, h.sites);
    h.objects_left_out = finish_rows(objects, h.levels, h.objects);
    std::sort(h.first_touch_per_numa.begin(), h.first_touch_per_numa.end());
    h.first_touch_locality = first_touch_locality(h);
    for (const auto& [backend, n] : by_backend)
        if (n > 0) h.samples_by_backend.emplace_back(backend, n);
    const auto in_order = [](const auto& a, const auto& b) { return backend_rank(a.first) < backend_rank(b.first); };
    std::stable_sort(h.samples_by_backend.begin(), h.samples_by_backend.end(), in_order);
    for (const auto& [backend, n] : h.samples_by_backend) h.backends.push_back(backend);
    if (!h.papi_misses.empty()) h.backends.emplace_back(to_string(SampleBackend::Papi));
    std::stable_sort(h.access_backends.begin(), h.access_backends.end(),
                     [](const std::string& a, const std::string& b) { return backend_rank(a) < backend_rank(b); });
    return h;
}

}  // namespace

std::vector<NodeMemoryHeatmap> build_memory_heatmaps(const Model& m, unsigned threads) {
    std::vector<NodeMemoryHeatmap> out;
    const RunModelKeys& k = m.run_keys();
    if (!k.level.present() || !k.backend.present()) return out;  // no samples in this model
    // Each node's on every core, each into its own slot, kept in model order;
    // a slot is held only for a node with samples (a million ranks' run
    // without any has 62,500 nodes: their heatmaps would be 150 MB).
    const std::vector<ComponentId> nodes = m.components_of_type(ComponentType::Node);
    std::vector<std::unique_ptr<NodeMemoryHeatmap>> all(nodes.size());
    parallel_for(nodes.size(), threads, [&](std::size_t n) {
        NodeMemoryHeatmap h = node_memory_heatmap(m, k, nodes[n]);
        if (!h.empty()) all[n] = std::make_unique<NodeMemoryHeatmap>(std::move(h));
    });
    for (std::unique_ptr<NodeMemoryHeatmap>& h : all)
        if (h) out.push_back(std::move(*h));
    return out;
}

}  // namespace stacksage
