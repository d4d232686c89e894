// The terminal report, in the shape of the runtime-stacking paper's output:
//
//   + Node n01: 16 cores available, 1 process created.
//         Rank 0 (pid 4711) created no threads (only the main thread) on cpu(s) [0]
//         ## WARNING ## Cores [1-15] may stay idle during execution (underloaded resources)
//            suggestion: ...
//   Analysis conclusion: 1 warning(s)
//
// with host names, ranks, runtimes and the stacking category of each process,
// the numbers behind each finding, suggestions, and what of the input was
// skipped. Large jobs stay readable: consecutive ranks that did the same are
// one line ("Ranks 0-31 (32 processes) each created ..."), and consecutive
// nodes whose report would be identical are one line ("+ Nodes n02-n64: same
// as n01"). The report renders what the analysis decided and nothing else.
#pragma once

#include <string>
#include <vector>

#include "reports/report_data.hpp"

namespace stacksage {

struct TextReportOptions {
    bool color = false;            // ANSI colours (the CLI sets it for terminals only)
    bool show_info = true;         // info findings (SMT, runtime stacking, service flows)
    std::size_t max_notes = 20;    // input notes printed before "... and N more"
};

std::string render_text_report(const ReportData& data, const TextReportOptions& options = {});

}  // namespace stacksage
