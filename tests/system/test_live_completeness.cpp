// A live Open MPI job on this host whose rank 1 runs its program without
// the recorder (a wrapper drops LD_PRELOAD before exec): the report says the
// recording is incomplete, naming rank 1, and `stacksage check --fail-on
// error` fails. Skipped without mpirun, the MPI example or the recorder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using stacksage::testing::shell;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";

}  // namespace

TEST(LiveCompleteness, AnUntracedRankMakesTheRecordingIncomplete) {
    const std::string mpirun = stacksage::testing::which("mpirun");
    const std::string app = kBin + "/examples/mpi_omp";
    if (mpirun.empty()) GTEST_SKIP() << "no mpirun";
    if (!stacksage::testing::is_executable(app)) GTEST_SKIP() << app << " is not built";
    if (!stacksage::testing::is_executable(kBin + "/preload/libstacksage-preload.so")) GTEST_SKIP() << "no recorder";
    stacksage::testing::TempDir dir;
    const std::string out = dir.str() + "/out";
    const std::string wrapper =
        "'if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then unset LD_PRELOAD; fi; exec " + app + " 0.1'";
    const auto run = shell("OMP_NUM_THREADS=1 " + kCli + " run -q -o " + out + " -- " + mpirun +
                           " --allow-run-as-root --oversubscribe -np 2 --bind-to none sh -c " + wrapper);
    ASSERT_EQ(run.exit_code, 0) << run.output;

    const auto check = shell(kCli + " check " + out + " --fail-on error");
    EXPECT_EQ(check.exit_code, 1) << check.output;
    EXPECT_NE(check.output.find("error: run: The recording is incomplete: 1 of 2 ranks (rank 1)"), std::string::npos)
        << check.output;

    const auto report = shell(kCli + " report " + out + " --format json");
    ASSERT_EQ(report.exit_code, 0) << report.output;
    const auto j = nlohmann::json::parse(report.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << report.output;
    const auto& first = j["findings"][0];
    EXPECT_EQ(first["code"], "incomplete-recording") << j["findings"].dump(1);
    EXPECT_EQ(first["severity"], "error");
    EXPECT_EQ(first["ranks"], nlohmann::json::array({1}));
    EXPECT_EQ(first["figures"]["ranks_expected"], 2);
    // The wrapper was recorded up to its exec: the cause and the fix say so.
    EXPECT_NE(first["detail"].get<std::string>().find("recorded until it exec'ed the program"), std::string::npos)
        << first["detail"];
    EXPECT_NE(first["suggestion"].get<std::string>().find("keep LD_PRELOAD and STACKSAGE_OUTPUT"), std::string::npos)
        << first["suggestion"];
}
