// The JSON report: every finding with its code, severity, node, resources,
// flows, message and suggestion, the per-node and per-process summaries, and
// the input notes. The schema is versioned and documented in
// docs/report-json.md.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/json_stream.hpp"
#include "reports/report_data.hpp"

namespace stacksage {

// Major version of the report schema; additions that readers can ignore do
// not change it.
inline constexpr int kReportJsonVersion = 1;

nlohmann::json report_to_json(const ReportData& data);

// The same report as text, report_to_json(data).dump(1) and a newline,
// written in pieces: one node's document at a time is in memory.
void write_report_json(const ReportData& data, const TextSink& sink);

}  // namespace stacksage
