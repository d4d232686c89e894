// The JSON of the analysis' findings and node summaries, written once for
// every report that carries them: the JSON report (docs/report-json.md) and
// the HTML page's data (docs/html-report.md).
#pragma once

#include <cstdint>

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"

namespace stacksage {

// Which report a finding is written for.
enum class FindingJsonShape {
    Report,  // every field; a run-wide finding's node is null
    Page,    // what the page shows: no remedy or figures; a run-wide finding's node is ""
};

// \return a rank, or null for a process without one (-1).
nlohmann::json rank_to_json(std::int64_t rank);

// \return the finding as an object (code, severity, check, node, resources,
//         message, detail, suggestion, flows, flow_count; in the Report
//         shape remedy and figures too).
nlohmann::json finding_to_json(const Finding& finding, FindingJsonShape shape = FindingJsonShape::Report);

// \return the node's summary figures: host, cores_available, cpus_available,
//         cpus_total, available, job_restricted, smt, topology, threads,
//         service_threads (its processes and launchers are the caller's).
nlohmann::json node_summary_to_json(const NodeSummary& node);

// \return the analysis' node groups (analysis/node_groups.hpp), worst
//         first: hosts (hostlist notation), size, nodes (host names), worst,
//         and findings, each with the group's message, detail and
//         suggestion, the indices of the members' findings into the findings
//         array, and flow_count and figures as {min, max} over the group.
nlohmann::json node_groups_to_json(const AnalysisResult& analysis);

// \return one node group as node_groups_to_json writes it (Report shape);
//         the Page shape leaves out what grows with the group's nodes (its
//         members' names and their findings' indices): the page of a million
//         ranks stays the size of its groups.
nlohmann::json node_group_to_json(const AnalysisResult& analysis, const NodeGroup& group,
                                  FindingJsonShape shape = FindingJsonShape::Report);

}  // namespace stacksage
