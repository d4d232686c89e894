// The runtime-stacking paper's three published outputs (Loussert et al.,
// SBAC-PAD 2017), reproduced from synthetic runs written as the preload
// would: event logs and an hwloc topology, through the loader, the checks and
// the terminal report.
#include <gtest/gtest.h>

#include "tests/support/analysed_run.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

std::vector<std::string> warnings_of(const AnalysisResult& a) {
    std::vector<std::string> out;
    for (const Finding& f : a.findings)
        if (f.severity == Severity::Warning) out.push_back(f.message);
    return out;
}

}  // namespace

// "One process on one core of a 16-core node": cores 1-15 idle.
TEST(PaperOutputs, OneProcessOnCoreZeroOfSixteen) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:16 pu:1");
    run.add_process(busy_process("n01", 4711, 0, 1, "0"));
    const ReportedRun r = report_of(dir.str());
    EXPECT_NE(r.text.find("+ Node n01: 16 cores available, 1 process created.\n"
                          "      Rank 0 (pid 4711) created no threads (only the main thread) on cpu(s) [0]\n"
                          "      ## WARNING ## Cores [1-15] may stay idle during execution (underloaded resources)\n"),
              std::string::npos)
        << r.text;
    EXPECT_NE(r.text.find("Analysis conclusion: 1 warning(s)\n"), std::string::npos) << r.text;
    EXPECT_EQ(warnings_of(r.analysis),
              (std::vector<std::string>{"Cores [1-15] may stay idle during execution (underloaded resources)"}));
    EXPECT_NE(r.text.find("suggestion: "), std::string::npos);
}

// "32 single-thread processes on 16 cores": cores 0-15 overloaded,
// spatially concurrent.
TEST(PaperOutputs, ThirtyTwoProcessesOnSixteenCores) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","32","./app"])");
    run.add_host("n01", "pack:1 core:16 pu:1");
    for (int rank = 0; rank < 32; ++rank) {
        SyntheticProcess p = busy_process("n01", 5000 + rank, rank, 1, "0-15");
        p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    EXPECT_NE(r.text.find("+ Node n01: 16 cores available, 32 processes created.\n"
                          "      Ranks 0-31 (32 processes) each created no threads (only the main thread) on cpu(s) [0-15]\n"
                          "      ## WARNING ## Cores [0-15] had more threads to run than they could run at once "
                          "(overloaded resources) for the whole run (10.0 s) (spatially concurrent configuration)\n"),
              std::string::npos)
        << r.text;
    EXPECT_NE(r.text.find("Analysis conclusion: 1 warning(s)\n"), std::string::npos) << r.text;
    // The suggestion names the launcher that was used, with numbers computed
    // from the run: 32 ranks cannot fit 16 cores.
    ASSERT_FALSE(r.analysis.findings.empty());
    EXPECT_EQ(r.analysis.launcher.kind, LauncherKind::OpenMPI);
    EXPECT_NE(r.analysis.findings.front().suggestion.find("mpirun --map-by ppr:16:node --bind-to core"),
              std::string::npos)
        << r.analysis.findings.front().suggestion;
}

// "4 processes of 8 threads, all allowed cpus 0-8, on 32 cores": both warnings.
TEST(PaperOutputs, FourProcessesOfEightThreadsOnNineOfThirtyTwoCores) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:2 core:16 pu:1");
    for (int rank = 0; rank < 4; ++rank) run.add_process(busy_process("n01", 6000 + rank, rank, 8, "0-8"));
    const ReportedRun r = report_of(dir.str());
    EXPECT_NE(r.text.find("+ Node n01: 32 cores available, 4 processes created.\n"
                          "      Ranks 0-3 (4 processes) each created 7 threads (8 with the main thread) on cpu(s) [0-8] — "
                          "application 1, "
                          "GNU OpenMP 7; no runtime stacking\n"),
              std::string::npos)
        << r.text;
    EXPECT_EQ(warnings_of(r.analysis),
              (std::vector<std::string>{
                  "Cores [0-8] had more threads to run than they could run at once (overloaded resources) for "
                  "the whole run (10.0 s) (spatially concurrent configuration)",
                  "Cores [9-31] may stay idle during execution (underloaded resources)"}));
    EXPECT_NE(r.text.find("Analysis conclusion: 2 warning(s)\n"), std::string::npos) << r.text;
    // The flow-centric numbers are folded into the overload: 32 threads for 9 cores.
    const Finding& overload = r.analysis.findings.front();
    EXPECT_EQ(overload.check, "resource-centric+flow-centric");
    EXPECT_NE(overload.detail.find("32 threads of 4 processes may run at once on the 9 cores"), std::string::npos)
        << overload.detail;
    EXPECT_EQ(overload.flow_count, 32u);
    // Each rank gets 8 of the 32 cores: 8 threads fit.
    const Finding& idle = r.analysis.findings[1];
    EXPECT_NE(idle.suggestion.find("8 cores"), std::string::npos) << idle.suggestion;
}
