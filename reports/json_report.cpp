#include "reports/json_report.hpp"
#include "reports/analysis_json.hpp"
#include "reports/json_stream.hpp"
#include "reports/memory_heatmap_json.hpp"
#include "reports/network_report.hpp"

namespace stacksage {

namespace {

// One node with its processes (each flow's CPU time) and launchers.
nlohmann::json node_to_json(const AnalysisResult& a, const NodeSummary& n) {
    nlohmann::json j = node_summary_to_json(n);
    nlohmann::json procs = nlohmann::json::array();
    for (std::size_t i : n.processes) {
        const ProcessSummary& p = a.processes[i];
        nlohmann::json runtimes = nlohmann::json::array();
        for (const RuntimeUse& r : p.runtimes)
            runtimes.push_back({{"name", r.name},
                                {"family", std::string(to_string(r.family))},
                                {"flows", r.flows},
                                {"active", r.active}});
        // Each flow's CPU time, null where it is unknown (a process killed by SIGKILL).
        nlohmann::json flows = nlohmann::json::array();
        if (i < a.view.processes.size())
            for (std::uint32_t f : a.view.processes[i].flows) {
                const FlowView& flow = a.view.flows[f];
                flows.push_back({{"tid", flow.tid},
                                 {"cpu_us", flow.cpu_time_us >= 0 ? nlohmann::json(flow.cpu_time_us)
                                                                   : nlohmann::json(nullptr)}});
            }
        procs.push_back({{"rank", rank_to_json(p.rank)},
                         {"pid", p.pid},
                         {"name", p.name},
                         {"threads", p.threads},
                         {"created_threads", p.created_threads},
                         {"service_threads", p.service_threads},
                         {"cpus", p.cpus.to_list_string()},
                         {"runtimes", std::move(runtimes)},
                         {"category", p.category},
                         {"end", p.end_how},
                         {"log_ends_early", p.log_ends_early.empty() ? nlohmann::json(nullptr)
                                                                      : nlohmann::json(p.log_ends_early)},
                         {"untraced_threads", p.untraced_threads},
                         {"unseen_cpu_us", p.unseen_cpu_us},
                         {"flows", std::move(flows)}});
    }
    j["processes"] = std::move(procs);
    nlohmann::json ls = nlohmann::json::array();
    for (std::size_t i : n.launchers) {
        const ProcessSummary& p = a.processes[i];
        ls.push_back({{"pid", p.pid}, {"name", p.name}, {"launcher", p.launcher_name}, {"threads", p.threads}});
    }
    j["launchers"] = std::move(ls);
    return j;
}

// Every member of the report but "nodes" (the one that grows with the ranks).
nlohmann::json report_without_nodes(const ReportData& data) {
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
    doc["node_groups"] = node_groups_to_json(a);
    nlohmann::json findings = nlohmann::json::array();
    for (const Finding& f : a.findings) findings.push_back(finding_to_json(f));
    doc["findings"] = std::move(findings);
    doc["memory"] = memory_heatmaps_to_json(a.memory);
    if (data.network != nullptr) doc["network"] = network_to_json(*data.network);
    nlohmann::json ns = nlohmann::json::array();
    for (const LoadNote& n : notes)
        ns.push_back({{"level", std::string(to_string(n.level))}, {"file", n.file}, {"message", n.message}});
    doc["input"] = {{"notes", std::move(ns)}};
    return doc;
}

}  // namespace

nlohmann::json report_to_json(const ReportData& data) {
    const AnalysisResult& a = *data.analysis;
    nlohmann::json doc = report_without_nodes(data);
    nlohmann::json nodes = nlohmann::json::array();
    for (const NodeSummary& n : a.nodes) nodes.push_back(node_to_json(a, n));
    doc["nodes"] = std::move(nodes);
    return doc;
}

void write_report_json(const ReportData& data, const TextSink& sink) {
    const AnalysisResult& a = *data.analysis;
    const StreamedArray nodes{a.nodes.size(), [&a](std::size_t i) { return node_to_json(a, a.nodes[i]); }};
    write_json_object(sink, report_without_nodes(data), {{"nodes", nodes}}, 1);
    sink("\n");
}

}  // namespace stacksage
