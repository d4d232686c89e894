// stacksage_attributed_page: writes the HTML report of a run whose memory
// samples are attributed to call sites and data objects of known shape
// (tests/support/attributed_run.hpp), for the browser test of the page's
// table of call sites x levels and its heatmap per object.
//
//   stacksage_attributed_page RUN_DIR PAGE.html
#include <fstream>
#include <iostream>

#include "analysis/analyzer.hpp"
#include "reports/html_report.hpp"
#include "tests/support/attributed_run.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: stacksage_attributed_page RUN_DIR PAGE.html\n";
        return 2;
    }
    std::filesystem::create_directories(argv[1]);
    const stacksage::test::AttributedRun attributed(argv[1]);
    const stacksage::AnalysisResult analysis = stacksage::analyze(attributed.run.model);
    stacksage::ReportData data;
    data.analysis = &analysis;
    data.notes = &attributed.run.notes;
    data.directory = argv[1];
    std::ofstream(argv[2]) << stacksage::render_html_report(data, attributed.run.model);
    return 0;
}
