#include "reports/memory_heatmap_json.hpp"

namespace stacksage {

namespace {

// A call site or object row: its label, detail, samples per level (by name).
nlohmann::json code_row_json(const HeatmapCodeRow& r, const NodeMemoryHeatmap& h, const char* label, const char* detail) {
    nlohmann::json per_level = nlohmann::json::object();
    for (std::size_t l = 0; l < r.per_level.size() && l < h.levels.size(); ++l)
        if (r.per_level[l] > 0) per_level[h.levels[l].level] = r.per_level[l];
    return {{label, r.label},
            {detail, r.detail},
            {"per_level", std::move(per_level)},
            {"accesses", r.accesses},
            {"first_touch", r.first_touch},
            {"first_touch_remote", r.first_touch_remote}};
}

nlohmann::json top_sites_json(const std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>>& top) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [row, n] : top) out.push_back({{"site", row->label}, {"call_path", row->detail}, {"samples", n}});
    return out;
}

}  // namespace

nlohmann::json memory_heatmaps_to_json(const std::vector<NodeMemoryHeatmap>& heatmaps) {
    using json = nlohmann::json;
    json out = json::array();
    for (const NodeMemoryHeatmap& h : heatmaps) {
        json node;
        node["host"] = h.host;
        node["pus"] = h.pu_os;
        std::vector<std::int64_t> core_of_pu;
        for (std::size_t c : h.core_of_pu) core_of_pu.push_back(c == static_cast<std::size_t>(-1) ? -1 : static_cast<std::int64_t>(c));
        node["core_of_pu"] = core_of_pu;
        node["numa_nodes"] = h.numa_nodes;
        node["backends"] = h.backends;
        json by_backend = json::object();
        for (const auto& [backend, n] : h.samples_by_backend) by_backend[backend] = n;
        node["samples_by_backend"] = std::move(by_backend);
        node["access_backends"] = h.access_backends;
        node["access_samples"] = h.access_samples;
        json levels = json::array();
        for (const HeatmapLevel& l : h.levels) {
            json targets = json::array();
            for (const HeatmapLevel::Target& t : l.per_target)
                targets.push_back({{"type", std::string(to_string(t.type))},
                                   {"kind", t.kind},
                                   {"os_index", t.os_index},
                                   {"logical_index", t.logical_index},
                                   {"samples", t.samples}});
            levels.push_back({{"level", l.level},
                              {"samples", l.samples},
                              {"share", l.share},
                              {"loads", l.loads},
                              {"stores", l.stores},
                              {"remote", l.remote},
                              {"mean_latency", l.mean_latency >= 0 ? json(l.mean_latency) : json(nullptr)},
                              {"per_pu", l.per_pu},
                              {"per_core", l.per_core},
                              {"targets", targets},
                              {"top_sites", top_sites_json(top_sites_of_level(h, levels.size(), kTopSitesPerLevel))}});
        }
        node["levels"] = levels;
        json numa = json::array();
        for (const auto& [n, count] : h.first_touch_per_numa) numa.push_back({{"numa", n}, {"samples", count}});
        node["first_touch"] = {{"samples", h.first_touch_samples},
                               {"remote", h.first_touch_remote},
                               {"unresolved", h.first_touch_unresolved},
                               {"locality", std::string(to_string(h.first_touch_locality))},
                               {"per_pu", h.first_touch_per_pu},
                               {"per_numa", numa}};
        json papi = json::object();
        for (const auto& [level, n] : h.papi_misses) papi[level] = n;
        node["papi_misses"] = papi;
        node["first_touch"]["top_sites"] = top_sites_json(top_first_touch_sites(h, kTopSitesPerLevel));
        json sites = json::array(), objects = json::array();
        for (const HeatmapCodeRow& r : h.sites) sites.push_back(code_row_json(r, h, "site", "call_path"));
        for (const HeatmapCodeRow& r : h.objects) objects.push_back(code_row_json(r, h, "object", "kind"));
        node["sites"] = std::move(sites);
        node["objects"] = std::move(objects);
        node["sites_left_out"] = h.sites_left_out;
        node["objects_left_out"] = h.objects_left_out;
        node["samples_without_site"] = h.sites.empty() ? 0 : h.samples_without_site;
        out.push_back(std::move(node));
    }
    return out;
}

}  // namespace stacksage
