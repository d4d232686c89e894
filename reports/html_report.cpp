#include "reports/html_report.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "analysis/activity.hpp"
#include "analysis/memory_heatmap.hpp"
#include "reports/network_report.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"
#include "core/run_model_schema.hpp"
#include "reports/analysis_json.hpp"
#include "reports/html_report_page.hpp"
#include "reports/markup_entity.hpp"

namespace stacksage {

namespace {

using json = nlohmann::json;

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

std::string_view string_attr(const Model& m, ComponentId id, std::string_view key) {
    const auto k = m.find_key(key);
    if (!k) return {};
    return m.get_string(id, *k).value_or(std::string_view{});
}

// A node as the page draws it: its boxes, and its PUs in drawing order.
struct DrawnNode {
    std::vector<std::int64_t> pus;                               // os index of each PU, in page order
    std::unordered_map<std::uint32_t, std::size_t> pu_index;     // PU component -> page index
    std::unordered_map<std::int64_t, std::size_t> pu_by_os;      // os index -> page index (first PU with it)
};

json run_json(const ReportData& data, const AnalysisResult& a) {
    return {{"name", a.run_name},
            {"directory", data.directory},
            {"command", a.run_command},
            {"launcher", std::string(to_string(a.launcher.kind))}};
}

// The whole run's counts: the page shows only the groups' representatives.
json summary_json(const ReportData& data, const AnalysisResult& a) {
    std::size_t processes = 0;
    for (const ProcessView& p : a.view.processes) processes += !p.launcher;
    return {{"nodes", a.view.nodes.size()},
            {"processes", processes},
            {"flows", a.view.flows.size()},
            {"errors", a.count(Severity::Error)},
            {"warnings", a.count(Severity::Warning)},
            {"infos", a.count(Severity::Info)},
            {"logs", data.logs},
            {"logs_skipped", data.logs_skipped}};
}

json runtimes_json(const RunView& view) {
    json runtimes = json::array();
    for (const RuntimeName& r : view.runtimes) runtimes.push_back({{"name", r.name}, {"family", std::string(to_string(r.family))}});
    return runtimes;
}

// A node's summary (analysis) and its boxes (model); fills `drawn`.
json node_json(const Model& model, const NodeView& nv, const NodeSummary& summary, DrawnNode& drawn) {
    BoxBuilder builder(model, drawn.pus, drawn.pu_index);
    json node = node_summary_to_json(summary);
    node["boxes"] = nv.id != kNoComponent && model.is_alive(nv.id) ? builder.children_of(nv.id) : json::array();
    node["pus"] = drawn.pus;
    node["processes"] = summary.processes.size();
    node["worst"] = summary.worst_severity ? std::string(to_string(*summary.worst_severity)) : std::string("none");
    for (std::size_t i = 0; i < drawn.pus.size(); ++i) drawn.pu_by_os.emplace(drawn.pus[i], i);
    return node;
}

// Per PU in page order: the flows allowed there and the CPU time spent
// there, as the analysis counted them, and the over-subscribed CPUs.
void add_pu_usage(json& node, const PuUsage& usage, const NodeSummary& summary, const DrawnNode& drawn) {
    const std::size_t count = drawn.pus.size();
    std::vector<std::uint32_t> active(count, 0), service(count, 0);
    std::vector<double> measured_ms(count, 0), estimated_ms(count, 0);
    for (const auto& [cpu, u] : usage.by_cpu) {
        const auto it = drawn.pu_by_os.find(cpu);
        if (it == drawn.pu_by_os.end()) continue;
        active[it->second] = u.active_flows;
        service[it->second] = u.service_flows;
        estimated_ms[it->second] = u.estimated_ms;
    }
    bool have_measured = false;
    for (const auto& [pu, ms] : usage.measured_ms) {
        const auto it = drawn.pu_index.find(pu);
        if (it == drawn.pu_index.end()) continue;
        measured_ms[it->second] = ms;
        have_measured = true;
    }
    node["allowed_active"] = active;
    node["allowed_service"] = service;
    std::vector<double>& ms = have_measured ? measured_ms : estimated_ms;
    for (double& v : ms) v = std::round(v * 1000) / 1000;
    node["cpu_ms"] = ms;
    node["cpu_source"] = have_measured ? "cpu-clock samples" : "flows' CPU time spread over their affinity";
    node["oversubscribed"] = summary.oversubscribed.to_list_string();
}

// The node's memory heatmap, per PU in page order.
json memory_json(const NodeMemoryHeatmap& h, const DrawnNode& drawn) {
    const std::size_t count = drawn.pus.size();
    auto remap = [&](const std::vector<std::uint64_t>& per_pu) {
        std::vector<std::uint64_t> out(count, 0);
        for (std::size_t i = 0; i < per_pu.size() && i < h.pu_os.size(); ++i) {
            const auto it = drawn.pu_by_os.find(h.pu_os[i]);
            if (it != drawn.pu_by_os.end()) out[it->second] += per_pu[i];
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
    // Call sites and data objects: samples per entry of `levels` (first
    // touches last, where there are any).
    const auto rows = [&](const std::vector<HeatmapCodeRow>& of, const char* label, const char* detail) {
        json out = json::array();
        for (const HeatmapCodeRow& r : of) {
            json per_level = r.per_level;
            if (h.first_touch_samples > 0) per_level.push_back(r.first_touch);
            out.push_back({{label, r.label}, {detail, r.detail}, {"per_level", std::move(per_level)}});
        }
        return out;
    };
    return {{"backends", h.backends},
            {"access_samples", h.access_samples},
            {"levels", std::move(levels)},
            {"sites", rows(h.sites, "site", "call_path")},
            {"objects", rows(h.objects, "object", "kind")},
            {"sites_left_out", h.sites_left_out},
            {"objects_left_out", h.objects_left_out}};
}

// The node's load over time, as the analysis measured it (NodeLoad::series):
// per row (a CPU or a group of cores) the threads that wanted each of its
// CPUs, averaged per bin; the busy flows; the over-demanded windows.
json load_json(const NodeLoad& load) {
    const LoadSeries& s = load.series;
    auto rounded = [](const std::vector<float>& v) {
        std::vector<double> out(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::round(static_cast<double>(v[i]) * 100) / 100;
        return out;
    };
    json rows = json::array();
    for (const LoadSeries::Row& r : s.rows)
        rows.push_back({{"cpus", r.cpus.to_list_string()}, {"over_demanded", r.over_demanded}, {"demand", rounded(r.demand)}});
    json windows = json::array();
    for (const TimeSpan& w : s.over_windows) windows.push_back({w.start_ns, w.end_ns});
    return {{"start_ns", s.start_ns},
            {"bin_ns", s.bin_ns},
            {"bins", s.bins},
            {"rows", std::move(rows)},
            {"busy_flows", rounded(s.busy_flows)},
            {"over_windows", std::move(windows)},
            {"over_demanded", load.over_demanded.to_list_string()},
            {"over_demanded_ns", load.over_demanded_ns},
            {"run_ns", load.run_ns()}};
}

// The page's sections, one per node group (analysis/node_groups.hpp): the
// group as the analysis wrote it (hosts, size, findings with figures as
// ranges) and its representative node drawn once: boxes, per-PU usage, load
// and memory heatmap. Alike nodes are drawn once, so the page grows with the
// groups, not the nodes. Only the representatives' processes and flows are
// on the page (processes name their group, flows their page process).
class GroupsJson {
public:
    GroupsJson(const AnalysisResult& a, const Model& model) : a_(a), model_(model) {
        const RunView& view = a.view;
        // Each heatmap goes to the first node of its host (a later heatmap
        // of the same host replaces an earlier one).
        std::unordered_map<std::string_view, std::size_t> first_node_of_host;
        for (std::size_t n = 0; n < view.nodes.size(); ++n) first_node_of_host.emplace(view.nodes[n].host, n);
        std::unordered_map<std::size_t, std::size_t> memory_of_node;
        for (std::size_t h = 0; h < a.memory.size(); ++h)
            if (auto it = first_node_of_host.find(a.memory[h].host); it != first_node_of_host.end()) memory_of_node[it->second] = h;
        std::vector<std::size_t> group_of_node(view.nodes.size(), kNone);
        memory_of_group_.assign(a.node_groups.size(), kNone);
        for (std::size_t g = 0; g < a.node_groups.size(); ++g) {
            const std::size_t rep = a.node_groups[g].representative();
            group_of_node[rep] = g;
            if (auto it = memory_of_node.find(rep); it != memory_of_node.end()) memory_of_group_[g] = it->second;
        }
        std::vector<std::size_t> page_process(view.processes.size(), kNone);
        for (std::size_t p = 0; p < view.processes.size(); ++p) {
            const std::size_t g = group_of_node[view.processes[p].node];
            if (g == kNone) continue;
            page_process[p] = processes_.size();
            processes_.push_back({p, g});
        }
        for (std::size_t f = 0; f < view.flows.size(); ++f)
            if (const std::size_t p = page_process[view.flows[f].process]; p != kNone) flows_.push_back({f, p});
    }
    std::size_t size() const { return a_.node_groups.size(); }
    json operator()(std::size_t g) const {
        const NodeGroup& group = a_.node_groups[g];
        const std::size_t n = group.representative();
        DrawnNode drawn;
        json node = node_json(model_, a_.view.nodes[n], a_.nodes[n], drawn);
        add_pu_usage(node, a_.pu_usage[n], a_.nodes[n], drawn);
        if (n < a_.loads.size()) node["load"] = load_json(a_.node_load_with_series(static_cast<std::uint32_t>(n)));
        if (memory_of_group_[g] != kNone) node["memory"] = memory_json(a_.memory[memory_of_group_[g]], drawn);
        json section = node_group_to_json(a_, group, FindingJsonShape::Page);
        section["node"] = std::move(node);
        return section;
    }
    // The representatives' processes and flows: (index in the run view,
    // the group's or page process's index on the page).
    struct Row {
        std::size_t view_index;
        std::size_t owner;
    };
    const std::vector<Row>& processes() const { return processes_; }
    const std::vector<Row>& flows() const { return flows_; }

private:
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    const AnalysisResult& a_;
    const Model& model_;
    std::vector<std::size_t> memory_of_group_;  // per group: its representative's heatmap in a.memory, or kNone
    std::vector<Row> processes_, flows_;
};

// The run-wide findings (no node of their own); every node's findings are
// in its group's section, as one.
json findings_json(const AnalysisResult& a) {
    json findings = json::array();
    for (const Finding& f : a.findings)
        if (f.node.empty()) findings.push_back(finding_to_json(f, FindingJsonShape::Page));
    return findings;
}

json process_json(const ProcessView& p, std::size_t group, const Model& model) {
    return {{"group", group},
            {"rank", rank_to_json(p.rank)},
            {"pid", p.pid},
            {"name", std::string(p.name)},
            {"cmdline", std::string(string_attr(model, p.id, run_keys::cmdline))},
            {"launcher", p.launcher ? json(std::string(p.launcher_name)) : json(nullptr)},
            {"end", std::string(p.end_how)},
            {"start_ns", p.start_ns},
            {"end_ns", p.end_ns}};
}

// Flows as rows, in the order of kFlowColumns.
const char* const kFlowColumns[] = {"process", "tid", "name", "runtime", "kind", "start_ns", "end_ns", "cpu_us", "state", "cpuset", "affinity"};

json flow_json(const FlowView& f, std::size_t page_process) {
    json intervals = json::array();
    for (const AffinityInterval& i : f.intervals) intervals.push_back({i.start_ns, i.end_ns, i.cpuset.to_list_string()});
    return {page_process, f.tid, std::string(f.name), f.runtime, std::string(to_string(f.kind)), f.start_ns, f.end_ns,
            f.cpu_time_us, std::string(activity_state(f)), f.placement.to_list_string(), std::move(intervals)};
}

json notes_json(const std::vector<LoadNote>* notes) {
    json out = json::array();
    if (notes)
        for (const LoadNote& n : *notes)
            out.push_back({{"level", std::string(to_string(n.level))}, {"file", n.file}, {"message", n.message}});
    return out;
}

}  // namespace

namespace {

// The members of the page's data but its per-group, per-process and
// per-flow arrays (page_arrays), made one element at a time.
json page_data_without_arrays(const ReportData& data) {
    const AnalysisResult& a = *data.analysis;
    json doc;
    doc["schema"] = "stacksage-html-report";
    doc["version"] = kHtmlReportDataVersion;
    doc["run"] = run_json(data, a);
    doc["summary"] = summary_json(data, a);
    doc["runtimes"] = runtimes_json(a.view);
    doc["findings"] = findings_json(a);
    doc["flow_columns"] = kFlowColumns;
    doc["notes"] = notes_json(data.notes);
    if (data.network != nullptr) doc["network"] = network_to_json(*data.network);
    return doc;
}

std::map<std::string, StreamedArray, std::less<>> page_arrays(const AnalysisResult& a, const Model& model,
                                                              const GroupsJson& groups) {
    const RunView& view = a.view;
    return {{"groups", {groups.size(), [&groups](std::size_t g) { return groups(g); }}},
            {"processes", {groups.processes().size(), [&view, &model, &groups](std::size_t i) {
                 const GroupsJson::Row& r = groups.processes()[i];
                 return process_json(view.processes[r.view_index], r.owner, model);
             }}},
            {"flows", {groups.flows().size(), [&view, &groups](std::size_t i) {
                 const GroupsJson::Row& r = groups.flows()[i];
                 return flow_json(view.flows[r.view_index], r.owner);
             }}}};
}

// json_for_script_block's escapes, on a piece of the text: pieces are whole
// values or punctuation, so no escaped sequence is cut between two.
void append_script_safe(std::string& out, std::string_view text) {
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
}

}  // namespace

nlohmann::json html_report_data(const ReportData& data, const Model& model) {
    json doc = page_data_without_arrays(data);
    const GroupsJson groups(*data.analysis, model);
    for (const auto& [key, array] : page_arrays(*data.analysis, model, groups)) {
        json elements = json::array();
        for (std::size_t i = 0; i < array.count; ++i) elements.push_back(array.element(i));
        doc[key] = std::move(elements);
    }
    return doc;
}

std::string json_for_script_block(const nlohmann::json& value) {
    const std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    std::string out;
    out.reserve(text.size() + text.size() / 16);
    append_script_safe(out, text);
    return out;
}

std::string html_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text)
        if (!append_markup_entity(out, static_cast<unsigned char>(c), "&#39;")) out += c;
    return out;
}

void write_html_report(const ReportData& data, const Model& model, const TextSink& sink) {
    const AnalysisResult& a = *data.analysis;
    const std::string title = "stacksage report: " + a.run_name;
    // The title passes through nlohmann's UTF-8 replacement first, like the data.
    const std::string safe_title = nlohmann::json(title).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    const GroupsJson groups(a, model);
    auto write_data = [&](const TextSink& page_sink) {
        std::string safe;
        const TextSink script_safe = [&](std::string_view piece) {
            safe.clear();
            append_script_safe(safe, piece);
            page_sink(safe);
        };
        write_json_object(script_safe, page_data_without_arrays(data), page_arrays(a, model, groups), -1);
    };
    write_html_page(sink, html_escape(nlohmann::json::parse(safe_title).get<std::string>()), write_data,
                    data.network != nullptr ? render_network_html(*data.network) : std::string());
}

std::string render_html_report(const ReportData& data, const Model& model) {
    std::string page;
    write_html_report(data, model, string_sink(page));
    return page;
}

}  // namespace stacksage
