// The HTML report: one self-contained page (inline CSS and JavaScript, no
// network access, opens from a file after `scp`) with one section per node
// group (the analysis's: nodes with the same findings as one,
// analysis/node_groups.hpp), each drawn once from its representative node:
// the topology as nested boxes coloured by the flows allowed per PU, the CPU
// time per PU or the memory accesses served per level, the findings linked
// to the boxes they concern, a table of processes and flows, and a timeline
// of the flows per runtime. A million ranks in a dozen groups give a page of
// a dozen drawn nodes. docs/html-report.md describes the page.
//
// The page embeds its data as JSON in a <script type="application/json">
// block and renders it with vanilla JavaScript that only ever writes data
// through textContent: a thread name such as "</script><script>..." stays
// text. Everything it shows comes from the analysis (findings, summaries,
// the run view's flows and runtimes, the memory heatmaps) and the model;
// it decides nothing itself.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/model.hpp"
#include "reports/json_stream.hpp"
#include "reports/report_data.hpp"

namespace stacksage {

// Version of the embedded data (docs/html-report.md).
inline constexpr int kHtmlReportDataVersion = 2;

// The data the page embeds: run, summary (the whole run's counts), groups
// (each with its representative node's box tree and per-PU arrays), the
// run-wide findings, the representatives' processes and flows. model: the merged model the analysis
// in `data` was computed from.
nlohmann::json html_report_data(const ReportData& data, const Model& model);

// The whole page.
std::string render_html_report(const ReportData& data, const Model& model);

// The same page written in pieces: one group's, process's or flow's data at
// a time is in memory.
void write_html_report(const ReportData& data, const Model& model, const TextSink& sink);

// JSON text made safe inside a <script> element: '<', '>' and '&' become
// \u003c, \u003e and \u0026 (so neither "</script" nor "<!--" can occur),
// U+2028/2029 are escaped too. JSON.parse gives back the same strings.
std::string json_for_script_block(const nlohmann::json& value);

// Text made safe in HTML element content and attribute values.
std::string html_escape(std::string_view text);

}  // namespace stacksage
