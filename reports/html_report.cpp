#include "reports/html_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "analysis/activity.hpp"
#include "analysis/memory_heatmap.hpp"
#include "analysis/run_view.hpp"
#include "core/run_model_schema.hpp"
#include "reports/html_report_page.hpp"

namespace stacksage {

namespace {

using json = nlohmann::json;

json rank_json(std::int64_t rank) { return rank >= 0 ? json(rank) : json(nullptr); }

std::string human_bytes(std::int64_t bytes) {
    static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        ++u;
    }
    char buf[32];
    if (v == static_cast<double>(static_cast<std::int64_t>(v))) std::snprintf(buf, sizeof buf, "%.0f %s", v, units[u]);
    else std::snprintf(buf, sizeof buf, "%.1f %s", v, units[u]);
    return buf;
}

bool drawn(ComponentType t) {
    switch (t) {
        case ComponentType::Chip:
        case ComponentType::Subdivision:
        case ComponentType::Numa:
        case ComponentType::Cache:
        case ComponentType::Core:
        case ComponentType::Thread: return true;
        default: return false;
    }
}

// Builds the nested boxes of one node. Chains of single-child caches and the
// core below them become one box with several labels, as lstopo stacks them,
// so 384 PUs stay readable.
class BoxBuilder {
public:
    BoxBuilder(const Model& m, std::vector<std::int64_t>& pus, std::unordered_map<std::uint32_t, std::size_t>& pu_index)
        : m_(m), pus_(pus), pu_index_(pu_index) {}

    json children_of(ComponentId id) {
        json out = json::array();
        // NUMA nodes first: they are drawn as strips at the top of their parent.
        for (int pass = 0; pass < 2; ++pass)
            for (ComponentId c = m_.first_child(id); c != kNoComponent; c = m_.next_sibling(c)) {
                const ComponentType t = m_.type(c);
                if (!drawn(t) || (pass == 0) != (t == ComponentType::Numa)) continue;
                out.push_back(box(c));
            }
        return out;
    }

private:
    std::string label(ComponentId c) const {
        const ComponentType t = m_.type(c);
        const std::int64_t os = m_.os_index(c);
        const auto size = m_.get_int(c, keys::size_bytes);
        switch (t) {
            case ComponentType::Chip: return (m_.kind(c) == "package" ? std::string("Package") : std::string(m_.kind(c))) + (os >= 0 ? " P#" + std::to_string(os) : "");
            case ComponentType::Subdivision: {
                std::string k(m_.kind(c));
                if (!k.empty()) k[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(k[0])));
                const auto li = m_.get_int(c, keys::logical_index);
                return (k.empty() ? "Group" : k) + (os >= 0 ? " P#" + std::to_string(os) : li ? " L#" + std::to_string(*li) : "");
            }
            case ComponentType::Numa:
                return "NUMA P#" + std::to_string(os) + (m_.kind(c).empty() ? "" : " " + std::string(m_.kind(c))) +
                       (size && *size > 0 ? " (" + human_bytes(*size) + ")" : "");
            case ComponentType::Cache:
                return std::string(m_.kind(c)) + (size && *size > 0 ? " " + human_bytes(*size) : "");
            case ComponentType::Core: return "Core P#" + std::to_string(os);
            default: return std::string(to_string(t));
        }
    }

    static const char* type_code(ComponentType t, std::string_view kind) {
        switch (t) {
            case ComponentType::Chip: return kind == "package" || kind.empty() ? "package" : "chip";
            case ComponentType::Subdivision: return "group";
            case ComponentType::Numa: return "numa";
            case ComponentType::Cache: return "cache";
            case ComponentType::Core: return "core";
            default: return "pu";
        }
    }

    std::vector<ComponentId> drawn_children(ComponentId id) const {
        std::vector<ComponentId> out;
        for (ComponentId c = m_.first_child(id); c != kNoComponent; c = m_.next_sibling(c))
            if (drawn(m_.type(c))) out.push_back(c);
        return out;
    }

    json box(ComponentId c) {
        const ComponentType t = m_.type(c);
        if (t == ComponentType::Thread) {
            const std::size_t index = pus_.size();
            pus_.push_back(m_.os_index(c));
            pu_index_[index_of(c)] = index;
            return json{{"t", "pu"}, {"p", index}};
        }
        json labels = json::array({label(c)});
        json b{{"t", type_code(t, m_.kind(c))}};
        if (t == ComponentType::Cache) {
            if (auto level = m_.get_int(c, keys::cache_level)) b["lv"] = *level;
            if (auto li = m_.get_int(c, keys::logical_index)) b["li"] = *li;
        }
        if (t == ComponentType::Numa) b["os"] = m_.os_index(c);
        ComponentId at = c;
        // Fold single-child chains of caches (and the core under them).
        while (m_.type(at) == ComponentType::Cache) {
            const std::vector<ComponentId> kids = drawn_children(at);
            if (kids.size() != 1 || (m_.type(kids[0]) != ComponentType::Cache && m_.type(kids[0]) != ComponentType::Core))
                break;
            at = kids[0];
            labels.push_back(label(at));
            if (m_.type(at) == ComponentType::Core) b["t"] = "core";
        }
        b["l"] = std::move(labels);
        json kids = children_of(at);
        if (!kids.empty()) b["c"] = std::move(kids);
        return b;
    }

    const Model& m_;
    std::vector<std::int64_t>& pus_;
    std::unordered_map<std::uint32_t, std::size_t>& pu_index_;
};

// Findings whose resources the page colours as over-subscribed in the
// "flows allowed" mode: the checks' verdict, not the page's.
bool marks_oversubscription(const Finding& f) {
    return f.severity != Severity::Info &&
           (f.code == "overloaded-resources" || f.code == "overloaded-reservation" || f.code == "runtime-contention");
}

json finding_json(const Finding& f) {
    json flows = json::array();
    for (const FlowRef& r : f.flows)
        flows.push_back({{"host", r.host}, {"rank", rank_json(r.rank)}, {"pid", r.pid}, {"tid", r.tid}, {"runtime", r.runtime}});
    return {{"code", f.code},         {"severity", std::string(to_string(f.severity))},
            {"check", f.check},       {"node", f.node},
            {"resources", f.resources.to_list_string()},
            {"message", f.message},   {"detail", f.detail},
            {"suggestion", f.suggestion}, {"flows", std::move(flows)},
            {"flow_count", f.flow_count}};
}

std::string_view string_attr(const Model& m, ComponentId id, std::string_view key) {
    const auto k = m.find_key(key);
    if (!k) return {};
    return m.get_string(id, *k).value_or(std::string_view{});
}

}  // namespace

nlohmann::json html_report_data(const ReportData& data, const Model& model) {
    const AnalysisResult& a = *data.analysis;
    const RunView view = build_run_view(model);
    // The heatmaps the analysis built; the flows and runtimes as the analysis views them.
    const std::vector<NodeMemoryHeatmap>& heatmaps = a.memory;
    const auto cpu_time_key = model.find_key(memory_access_keys::cpu_time_ns);

    json doc;
    doc["schema"] = "stacksage-html-report";
    doc["version"] = kHtmlReportDataVersion;
    doc["run"] = {{"name", a.run_name},
                  {"directory", data.directory},
                  {"command", a.run_command},
                  {"launcher", std::string(to_string(a.launcher.kind))}};
    doc["summary"] = {{"errors", a.count(Severity::Error)},
                      {"warnings", a.count(Severity::Warning)},
                      {"infos", a.count(Severity::Info)},
                      {"logs", data.logs},
                      {"logs_skipped", data.logs_skipped}};

    // Runtimes of the run view, by index.
    json runtimes = json::array();
    for (const RuntimeName& r : view.runtimes) runtimes.push_back({{"name", r.name}, {"family", std::string(to_string(r.family))}});
    doc["runtimes"] = std::move(runtimes);

    // Nodes: summaries from the analysis, boxes and per-PU figures from the model.
    std::map<std::string, std::size_t, std::less<>> node_of_host;
    json nodes = json::array();
    std::vector<std::unordered_map<std::uint32_t, std::size_t>> pu_maps;
    std::vector<std::unordered_map<std::int64_t, std::size_t>> pu_by_os;
    for (const NodeView& nv : view.nodes) {
        const std::string host(nv.host);
        node_of_host.emplace(host, nodes.size());
        std::vector<std::int64_t> pus;
        std::unordered_map<std::uint32_t, std::size_t> pu_index;
        BoxBuilder builder(model, pus, pu_index);
        json node;
        node["host"] = host;
        node["boxes"] = nv.id != kNoComponent && model.is_alive(nv.id) ? builder.children_of(nv.id) : json::array();
        node["pus"] = pus;
        node["available"] = nv.available.to_list_string();
        node["topology"] = std::string(nv.topology_source);
        for (const NodeSummary& s : a.nodes)
            if (s.host == host) {
                node["cores_available"] = s.cores_available;
                node["cpus_available"] = s.cpus_available;
                node["cpus_total"] = s.cpus_total;
                node["smt"] = s.smt;
                node["job_restricted"] = s.job_restricted;
                node["processes"] = s.processes.size();
                node["threads"] = s.threads;
                node["service_threads"] = s.service_threads;
            }
        std::unordered_map<std::int64_t, std::size_t> by_os;
        for (std::size_t i = 0; i < pus.size(); ++i) by_os.emplace(pus[i], i);
        pu_maps.push_back(std::move(pu_index));
        pu_by_os.push_back(std::move(by_os));
        nodes.push_back(std::move(node));
    }

    // Per PU: flows whose placement allows it (active and service apart), CPU time.
    for (std::size_t n = 0; n < view.nodes.size(); ++n) {
        const std::size_t count = nodes[n]["pus"].size();
        std::vector<std::uint32_t> active(count, 0), service(count, 0);
        std::vector<double> measured_ms(count, 0), estimated_ms(count, 0);
        bool have_measured = false;
        for (std::uint32_t p : view.nodes[n].processes)
            for (std::uint32_t fi : view.processes[p].flows) {
                const FlowView& f = view.flows[fi];
                const unsigned k = f.placement.count();
                for (unsigned cpu : f.placement) {
                    const auto it = pu_by_os[n].find(cpu);
                    if (it == pu_by_os[n].end()) continue;
                    (f.service ? service : active)[it->second]++;
                    if (f.cpu_time_us > 0 && k > 0) estimated_ms[it->second] += f.cpu_time_us / 1000.0 / k;
                }
                if (cpu_time_key)
                    for (DataPathId dp : model.datapaths(f.id, DataPathType::RanOn, Direction::Out)) {
                        const auto ns = model.get_int(dp, *cpu_time_key);
                        const auto it = pu_maps[n].find(index_of(model.target(dp)));
                        if (!ns || it == pu_maps[n].end()) continue;
                        measured_ms[it->second] += *ns / 1e6;
                        have_measured = true;
                    }
            }
        json& node = nodes[n];
        node["allowed_active"] = active;
        node["allowed_service"] = service;
        std::vector<double>& ms = have_measured ? measured_ms : estimated_ms;
        for (double& v : ms) v = std::round(v * 1000) / 1000;
        node["cpu_ms"] = ms;
        node["cpu_source"] = have_measured ? "cpu-clock samples" : "flows' CPU time spread over their affinity";
        Cpuset over;
        for (const Finding& f : a.findings)
            if (f.node == view.nodes[n].host && marks_oversubscription(f)) over |= f.resources;
        node["oversubscribed"] = over.to_list_string();
    }

    // Memory heatmaps, per PU in this page's PU order.
    for (const NodeMemoryHeatmap& h : heatmaps) {
        const auto at = node_of_host.find(h.host);
        if (at == node_of_host.end()) continue;
        const std::size_t n = at->second;
        const std::size_t count = nodes[n]["pus"].size();
        auto remap = [&](const std::vector<std::uint64_t>& per_pu) {
            std::vector<std::uint64_t> out(count, 0);
            for (std::size_t i = 0; i < per_pu.size() && i < h.pu_os.size(); ++i) {
                const auto it = pu_by_os[n].find(h.pu_os[i]);
                if (it != pu_by_os[n].end()) out[it->second] += per_pu[i];
            }
            return out;
        };
        json levels = json::array();
        for (const HeatmapLevel& l : h.levels)
            levels.push_back({{"level", l.level},
                              {"samples", l.samples},
                              {"share", std::round(l.share * 10000) / 10000},
                              {"remote", l.remote},
                              {"mean_latency", l.mean_latency >= 0 ? json(std::round(l.mean_latency * 10) / 10) : json(nullptr)},
                              {"per_pu", remap(l.per_pu)}});
        if (h.first_touch_samples > 0)
            levels.push_back({{"level", "first_touch"},
                              {"samples", h.first_touch_samples},
                              {"share", nullptr},
                              {"remote", h.first_touch_remote},
                              {"mean_latency", nullptr},
                              {"per_pu", remap(h.first_touch_per_pu)}});
        nodes[n]["memory"] = {{"backends", h.backends}, {"access_samples", h.access_samples}, {"levels", std::move(levels)}};
    }

    // Worst finding per node (run-wide findings count for every node).
    for (json& node : nodes) node["worst"] = "none";
    auto worse = [](const std::string& a, std::string_view b) {
        static const std::vector<std::string_view> order = {"none", "info", "warning", "error"};
        return std::find(order.begin(), order.end(), b) > std::find(order.begin(), order.end(), a);
    };
    for (const Finding& f : a.findings) {
        const std::string_view sev = to_string(f.severity);
        for (std::size_t n = 0; n < view.nodes.size(); ++n)
            if ((f.node.empty() || f.node == view.nodes[n].host) && worse(nodes[n]["worst"].get<std::string>(), sev))
                nodes[n]["worst"] = std::string(sev);
    }
    doc["nodes"] = std::move(nodes);

    json findings = json::array();
    for (const Finding& f : a.findings) findings.push_back(finding_json(f));
    doc["findings"] = std::move(findings);

    // Processes, then flows as rows (columns named in "flow_columns").
    json processes = json::array();
    for (const ProcessView& p : view.processes)
        processes.push_back({{"node", p.node},
                             {"rank", rank_json(p.rank)},
                             {"pid", p.pid},
                             {"name", std::string(p.name)},
                             {"cmdline", std::string(string_attr(model, p.id, run_keys::cmdline))},
                             {"launcher", p.launcher ? json(std::string(p.launcher_name)) : json(nullptr)},
                             {"end", std::string(p.end_how)},
                             {"start_ns", p.start_ns},
                             {"end_ns", p.end_ns}});
    doc["processes"] = std::move(processes);
    doc["flow_columns"] = {"process", "tid", "name", "runtime", "kind", "start_ns", "end_ns", "cpu_us", "state", "cpuset", "affinity"};
    json flows = json::array();
    for (const FlowView& f : view.flows) {
        json intervals = json::array();
        for (const AffinityInterval& i : f.intervals) intervals.push_back({i.start_ns, i.end_ns, i.cpuset.to_list_string()});
        flows.push_back({f.process, f.tid, std::string(f.name), f.runtime, std::string(f.kind), f.start_ns, f.end_ns,
                         f.cpu_time_us, std::string(activity_state(f)), f.placement.to_list_string(), std::move(intervals)});
    }
    doc["flows"] = std::move(flows);

    json notes = json::array();
    if (data.notes)
        for (const LoadNote& n : *data.notes)
            notes.push_back({{"level", std::string(to_string(n.level))}, {"file", n.file}, {"message", n.message}});
    doc["notes"] = std::move(notes);
    return doc;
}

std::string json_for_script_block(const nlohmann::json& value) {
    const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        // Outside strings these characters never occur in JSON, so escaping
        // them everywhere only touches string contents.
        if (c == '<') out += "\\u003c";
        else if (c == '>') out += "\\u003e";
        else if (c == '&') out += "\\u0026";
        else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
            out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
            i += 2;
        } else out += c;
    }
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

std::string render_html_report(const ReportData& data, const Model& model) {
    const nlohmann::json doc = html_report_data(data, model);
    const std::string title = "stacksage report: " + doc["run"]["name"].get<std::string>();
    // The title passes through nlohmann's UTF-8 replacement first, like the data.
    const std::string safe_title = nlohmann::json(title).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return html_page(html_escape(nlohmann::json::parse(safe_title).get<std::string>()), json_for_script_block(doc));
}

}  // namespace stacksage
