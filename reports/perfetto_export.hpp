// The timeline as Chrome / Perfetto trace JSON (Trace Event Format): opens
// in ui.perfetto.dev and chrome://tracing. docs/html-report.md describes it.
//
//  - one trace process per recorded process ("n01: app (rank 3, pid 4711)"),
//    numbered 1, 2, ... in run order (real pids repeat across hosts; the
//    real one is in the name and the args), one thread per flow (its tid);
//  - each flow's lifetime is a complete event ("X") named after the thread,
//    category its runtime, with cpuset, CPU time and state in its args;
//  - each affinity change is an instant event ("i", thread scope) with the
//    new and the previous cpuset.
// Times are microseconds from each host's first recorded event: hosts'
// monotonic clocks are not comparable, their starts are aligned.
// The flows, their states and runtimes are the analysis' view of them.
#pragma once

#include <nlohmann/json.hpp>

#include "analysis/analyzer.hpp"

namespace stacksage {

nlohmann::json perfetto_trace(const AnalysisResult& analysis);

}  // namespace stacksage
