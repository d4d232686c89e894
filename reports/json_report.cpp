#include "reports/json_report.hpp"
#include "reports/memory_heatmap_json.hpp"

namespace stacksage {

namespace {

nlohmann::json rank_json(std::int64_t rank) { return rank >= 0 ? nlohmann::json(rank) : nlohmann::json(nullptr); }

nlohmann::json finding_json(const Finding& f) {
    nlohmann::json j;
    j["code"] = std::string(to_string(f.code));
    j["severity"] = std::string(to_string(f.severity));
    j["check"] = f.check;
    j["node"] = f.node.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.node);
    j["resources"] = f.resources.to_list_string();
    j["message"] = f.message;
    j["detail"] = f.detail;
    j["suggestion"] = f.suggestion;
    if (f.remedy.empty()) {
        j["remedy"] = nullptr;
    } else {
        nlohmann::json env = nlohmann::json::object();
        for (const auto& [name, value] : f.remedy.env) env[name] = value;
        auto count = [](std::int64_t n) { return n < 0 ? nlohmann::json(nullptr) : nlohmann::json(n); };
        j["remedy"] = {{"processes_per_node", count(f.remedy.processes_per_node)},
                       {"threads_per_process", count(f.remedy.threads_per_process)},
                       {"cores_per_process", count(f.remedy.cores_per_process)},
                       {"launcher", f.remedy.launcher.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.remedy.launcher)},
                       {"launcher_options", f.remedy.launcher_options},
                       {"env", std::move(env)}};
    }
    j["flow_count"] = f.flow_count;
    nlohmann::json flows = nlohmann::json::array();
    for (const FlowRef& r : f.flows)
        flows.push_back({{"host", r.host}, {"rank", rank_json(r.rank)}, {"pid", r.pid}, {"tid", r.tid}, {"runtime", r.runtime}});
    j["flows"] = std::move(flows);
    nlohmann::json figures = nlohmann::json::object();
    for (const auto& [name, value] : f.figures) figures[name] = value;
    j["figures"] = std::move(figures);
    return j;
}

}  // namespace

nlohmann::json report_to_json(const ReportData& data) {
    const AnalysisResult& a = *data.analysis;
    const std::vector<LoadNote>& notes = *data.notes;
    nlohmann::json doc;
    doc["schema"] = "stacksage-report";
    doc["version"] = kReportJsonVersion;
    doc["run"] = {{"name", a.run_name},
                  {"directory", data.directory},
                  {"command", a.run_command},
                  {"launcher",
                   {{"kind", std::string(to_string(a.launcher.kind))},
                    {"command", a.launcher.command},
                    {"evidence", a.launcher.evidence}}}};
    std::size_t launchers = 0, threads = 0;
    for (const ProcessSummary& p : a.processes) {
        if (p.launcher) ++launchers;
        else threads += p.threads;
    }
    doc["summary"] = {{"nodes", a.nodes.size()},
                      {"processes", a.processes.size() - launchers},
                      {"launchers", launchers},
                      {"threads", threads},
                      {"errors", a.count(Severity::Error)},
                      {"warnings", a.count(Severity::Warning)},
                      {"infos", a.count(Severity::Info)},
                      {"logs", data.logs},
                      {"logs_skipped", data.logs_skipped}};
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeSummary& n : a.nodes) {
        nlohmann::json j;
        j["host"] = n.host;
        j["cores_available"] = n.cores_available;
        j["cpus_available"] = n.cpus_available;
        j["cpus_total"] = n.cpus_total;
        j["available"] = n.available.to_list_string();
        j["job_restricted"] = n.job_restricted;
        j["smt"] = n.smt;
        j["topology"] = n.topology_source;
        j["threads"] = n.threads;
        j["service_threads"] = n.service_threads;
        nlohmann::json procs = nlohmann::json::array();
        for (std::size_t i : n.processes) {
            const ProcessSummary& p = a.processes[i];
            nlohmann::json runtimes = nlohmann::json::array();
            for (const RuntimeUse& r : p.runtimes)
                runtimes.push_back({{"name", r.name},
                                    {"family", std::string(to_string(r.family))},
                                    {"flows", r.flows},
                                    {"active", r.active}});
            procs.push_back({{"rank", rank_json(p.rank)},
                             {"pid", p.pid},
                             {"name", p.name},
                             {"threads", p.threads},
                             {"created_threads", p.created_threads},
                             {"service_threads", p.service_threads},
                             {"cpus", p.cpus.to_list_string()},
                             {"runtimes", std::move(runtimes)},
                             {"category", p.category},
                             {"end", p.end_how}});
        }
        j["processes"] = std::move(procs);
        nlohmann::json ls = nlohmann::json::array();
        for (std::size_t i : n.launchers) {
            const ProcessSummary& p = a.processes[i];
            ls.push_back({{"pid", p.pid}, {"name", p.name}, {"launcher", p.launcher_name}, {"threads", p.threads}});
        }
        j["launchers"] = std::move(ls);
        nodes.push_back(std::move(j));
    }
    doc["nodes"] = std::move(nodes);
    nlohmann::json findings = nlohmann::json::array();
    for (const Finding& f : a.findings) findings.push_back(finding_json(f));
    doc["findings"] = std::move(findings);
    doc["memory"] = memory_heatmaps_to_json(a.memory);
    nlohmann::json ns = nlohmann::json::array();
    for (const LoadNote& n : notes)
        ns.push_back({{"level", std::string(to_string(n.level))}, {"file", n.file}, {"message", n.message}});
    doc["input"] = {{"notes", std::move(ns)}};
    return doc;
}

}  // namespace stacksage
