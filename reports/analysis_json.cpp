#include "reports/analysis_json.hpp"

namespace stacksage {

namespace {

using json = nlohmann::json;

json remedy_to_json(const Remedy& remedy) {
    if (remedy.empty()) return nullptr;
    json env = json::object();
    for (const auto& [name, value] : remedy.env) env[name] = value;
    auto count = [](std::int64_t n) { return n < 0 ? json(nullptr) : json(n); };
    return {{"processes_per_node", count(remedy.processes_per_node)},
            {"threads_per_process", count(remedy.threads_per_process)},
            {"cores_per_process", count(remedy.cores_per_process)},
            {"launcher", remedy.launcher.empty() ? json(nullptr) : json(remedy.launcher)},
            {"launcher_options", remedy.launcher_options},
            {"env", std::move(env)}};
}

}  // namespace

json rank_to_json(std::int64_t rank) { return rank >= 0 ? json(rank) : json(nullptr); }

json finding_to_json(const Finding& f, FindingJsonShape shape) {
    json j;
    j["code"] = std::string(to_string(f.code));
    j["severity"] = std::string(to_string(f.severity));
    j["check"] = f.check;
    j["node"] = f.node.empty() && shape == FindingJsonShape::Report ? json(nullptr) : json(f.node);
    j["resources"] = f.resources.to_list_string();
    j["message"] = f.message;
    j["detail"] = f.detail;
    j["suggestion"] = f.suggestion;
    j["flow_count"] = f.flow_count;
    json flows = json::array();
    for (const FlowRef& r : f.flows)
        flows.push_back({{"host", r.host}, {"rank", rank_to_json(r.rank)}, {"pid", r.pid}, {"tid", r.tid}, {"runtime", r.runtime}});
    j["flows"] = std::move(flows);
    j["ranks"] = f.ranks;
    j["hosts"] = f.hosts;
    if (shape == FindingJsonShape::Report) {
        j["remedy"] = remedy_to_json(f.remedy);
        json figures = json::object();
        for (const auto& [name, value] : f.figures) figures[name] = value;
        j["figures"] = std::move(figures);
    }
    return j;
}

json node_summary_to_json(const NodeSummary& n) {
    json j;
    j["host"] = n.host;
    j["cores_available"] = n.cores_available;
    j["cpus_available"] = n.cpus_available;
    j["cpus_total"] = n.cpus_total;
    j["available"] = n.available.to_list_string();
    j["job_restricted"] = n.job_restricted;
    j["smt"] = n.smt;
    j["launch_host"] = n.launch_host;
    j["topology"] = to_string(n.topology_source);
    j["cpu_quota"] = n.cpu_quota > 0 ? json(n.cpu_quota) : json(nullptr);
    j["threads"] = n.threads;
    j["service_threads"] = n.service_threads;
    return j;
}

json node_group_to_json(const AnalysisResult& a, const NodeGroup& g, FindingJsonShape shape) {
    const bool report = shape == FindingJsonShape::Report;
    json findings = json::array();
    for (const GroupFinding& f : g.findings) {
        json figures = json::object();
        for (const FigureRange& r : f.figures) figures[r.name] = {{"min", r.min}, {"max", r.max}};
        json finding = {{"code", std::string(to_string(f.code))},
                        {"severity", std::string(to_string(f.severity))},
                        {"check", f.check},
                        {"resources", f.resources.to_list_string()},
                        {"message", f.message},
                        {"detail", f.detail},
                        {"suggestion", f.suggestion},
                        {"flow_count", {{"min", f.flow_count_min}, {"max", f.flow_count_max}}},
                        {"figures", std::move(figures)}};
        if (report) finding["findings"] = f.findings;
        findings.push_back(std::move(finding));
    }
    json group = {{"hosts", g.hosts},
                  {"size", g.nodes.size()},
                  {"worst", g.worst_severity ? json(std::string(to_string(*g.worst_severity))) : json(nullptr)},
                  {"findings", std::move(findings)}};
    if (report) {
        json nodes = json::array();
        for (std::size_t n : g.nodes) nodes.push_back(a.nodes[n].host);
        group["nodes"] = std::move(nodes);
    }
    return group;
}

json node_groups_to_json(const AnalysisResult& a) {
    json groups = json::array();
    for (const NodeGroup& g : a.node_groups) groups.push_back(node_group_to_json(a, g));
    return groups;
}

}  // namespace stacksage
