// What a report renders: the analysis of a run and what loading it noted.
#pragma once

#include <string>
#include <vector>

#include "analysis/analyzer.hpp"
#include "core/load_note.hpp"

namespace stacksage { struct NetworkReport; }

namespace stacksage {

struct ReportData {
    const AnalysisResult* analysis = nullptr;
    const std::vector<LoadNote>* notes = nullptr;
    std::string directory;
    std::size_t logs = 0;          // event logs found
    std::size_t logs_skipped = 0;  // of which corrupt or unreadable
    // The job on the network (reports/network_report.hpp); null without a
    // fabric file or Slurm's switch tree.
    const NetworkReport* network = nullptr;
};

}  // namespace stacksage
