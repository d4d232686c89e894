// Live runs through `stacksage run`: an Open MPI job on this host whose
// rank 1 runs its program without the recorder (a wrapper drops LD_PRELOAD
// before exec) is an incomplete recording naming rank 1, and `stacksage
// check --fail-on error` fails; a launch through a host file is written into
// run.json. Skipped without mpirun, the MPI example or the recorder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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

// `stacksage run -- mpirun ... --hostfile F` writes the launch into run.json,
// the host file's hosts included (read where the run starts); a job none of
// whose ranks left a log is incomplete, on those hosts. The launcher here is
// a stand-in script named mpirun that starts nothing.
TEST(LiveCompleteness, RunJsonCarriesTheLaunchAndTheHostFilesHosts) {
    if (!stacksage::testing::is_executable(kBin + "/preload/libstacksage-preload.so")) GTEST_SKIP() << "no recorder";
    stacksage::testing::TempDir dir;
    const std::string fake = dir.str() + "/bin/mpirun";
    std::filesystem::create_directories(dir.path() / "bin");
    stacksage::testing::SyntheticRun::write_file(fake, "#!/bin/sh\nexit 0\n");
    std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    stacksage::testing::SyntheticRun::write_file(dir.path() / "hosts", "# the job's nodes\nh1 slots=2\nh2:2\n\n");
    const std::string out = dir.str() + "/out";
    const auto run =
        shell(kCli + " run -q -o " + out + " -- " + fake + " -np 4 --hostfile " + dir.str() + "/hosts ./app");
    ASSERT_EQ(run.exit_code, 0) << run.output;

    std::ifstream in(out + "/run.json");
    const auto record = nlohmann::json::parse(in, nullptr, false);
    ASSERT_FALSE(record.is_discarded());
    // A fake mpirun is no MPI stacksage knows: its ranks on other hosts are
    // said to run untraced, and its -np and host file are still recorded.
    EXPECT_EQ(record["launch"]["launcher"], "unknown-remote") << record.dump(1);
    EXPECT_EQ(record["launch"]["remote_ranks"], "not-forwarded");
    EXPECT_EQ(record["launch"]["processes"], 4);
    EXPECT_EQ(record["launch"]["hosts_from"], "command");
    EXPECT_EQ(record["launch"]["hosts"], nlohmann::json::array({"h1", "h2"}));

    const auto report = shell(kCli + " report " + out + " --format json");
    ASSERT_EQ(report.exit_code, 0) << report.output;
    const auto j = nlohmann::json::parse(report.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << report.output;
    const auto& first = j["findings"][0];
    EXPECT_EQ(first["code"], "incomplete-recording") << j["findings"].dump(1);
    EXPECT_EQ(first["ranks"], nlohmann::json::array({0, 1, 2, 3}));
    EXPECT_EQ(first["hosts"], nlohmann::json::array({"h1", "h2"}));
}
