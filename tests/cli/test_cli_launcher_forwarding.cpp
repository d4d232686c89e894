// cli/launcher_forwarding: which launcher a command starts (through
// wrappers, links and absolute paths) and how the command or its
// environment is changed so that the launcher carries the recorder to its
// ranks on other hosts. Launchers that are not installed here (MPICH,
// Intel MPI, Flux) are fake installs: the plan reads only their names and
// the files next to them.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "cli/batch_allocation.hpp"
#include "cli/launcher_forwarding.hpp"

namespace fs = std::filesystem;
using namespace stacksage::cli;

namespace {

using Command = std::vector<std::string>;

class LauncherForwardingTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "launcher-forwarding-test-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        root_ = pattern;
        env_["PATH"] = "";
        env_["HOME"] = (root_ / "home").string();
        recorder_.variables = {{"LD_PRELOAD", "/opt/stacksage/lib/libstacksage-preload.so"},
                               {"STACKSAGE_OUTPUT", "/shared/out"},
                               {"STACKSAGE_TOPOLOGY", "0"}};
        recorder_.output_directory = "/shared/out";
    }
    void TearDown() override { fs::remove_all(root_); }

    // A fake install: bin/<program> (executable) and its siblings; bin on PATH.
    fs::path install(const std::string& prefix, const std::string& program, std::vector<std::string> siblings = {}) {
        const fs::path bin = root_ / prefix / "bin";
        fs::create_directories(bin);
        siblings.push_back(program);
        for (const auto& s : siblings) {
            std::ofstream(bin / s) << "#!/bin/sh\n";
            fs::permissions(bin / s, fs::perms::owner_all);
        }
        env_["PATH"] = bin.string() + (env_["PATH"].empty() ? "" : ":" + env_["PATH"]);
        return bin / program;
    }

    LaunchPlan plan(const Command& command) {
        return plan_launch(command, recorder_, [this](const char* name) -> const char* {
            auto it = env_.find(name);
            return it == env_.end() ? nullptr : it->second.c_str();
        });
    }

    static std::string environment_value(const LaunchPlan& p, const std::string& name) {
        for (const auto& e : p.environment)
            if (e.name == name) return e.value;
        return "<unset>";
    }

    fs::path root_;
    std::map<std::string, std::string> env_;
    RecorderSetup recorder_;
};

const Command kOpenMpiSiblings = {"ompi_info", "orted", "orterun"};

TEST_F(LauncherForwardingTest, OpenMpiCarriesTheVariablesInItsEnvironmentList) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    const LaunchPlan p = plan({"mpirun", "--hostfile", "H", "-np", "4", "./app", "-n", "9"});
    EXPECT_EQ(p.kind, LauncherKind::OpenMpi);
    EXPECT_EQ(p.remote, RemoteRecording::Forwarded);
    EXPECT_EQ(p.how, "OMPI_MCA_mca_base_env_list");
    EXPECT_EQ(p.command, (Command{"mpirun", "--hostfile", "H", "-np", "4", "./app", "-n", "9"}));  // unchanged
    EXPECT_EQ(environment_value(p, "OMPI_MCA_mca_base_env_list"), "LD_PRELOAD;STACKSAGE_OUTPUT;STACKSAGE_TOPOLOGY");
    EXPECT_EQ(p.processes, 4);  // not the application's own -n 9
    EXPECT_TRUE(p.warnings.empty());
}

TEST_F(LauncherForwardingTest, OpenMpiKeepsTheUsersOwnEnvironmentList) {
    install("ompi", "mpiexec", kOpenMpiSiblings);
    env_["OMPI_MCA_mca_base_env_list"] = "OMP_NUM_THREADS;LD_PRELOAD";
    EXPECT_EQ(environment_value(plan({"mpiexec", "./app"}), "OMPI_MCA_mca_base_env_list"),
              "OMP_NUM_THREADS;LD_PRELOAD;STACKSAGE_OUTPUT;STACKSAGE_TOPOLOGY");
    // ... and one set in the user's parameter file, which the variable would override.
    env_.erase("OMPI_MCA_mca_base_env_list");
    fs::create_directories(root_ / "home/.openmpi");
    std::ofstream(root_ / "home/.openmpi/mca-params.conf") << "# mine\nmca_base_env_list = FOO;BAR=1\n";
    EXPECT_EQ(environment_value(plan({"mpiexec", "./app"}), "OMPI_MCA_mca_base_env_list"),
              "FOO;BAR=1;LD_PRELOAD;STACKSAGE_OUTPUT;STACKSAGE_TOPOLOGY");
}

// Open MPI refuses -x mixed with mca_base_env_list.
TEST_F(LauncherForwardingTest, OpenMpiUsesDashXWhenTheCommandDoes) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    const LaunchPlan p = plan({"mpirun", "-x", "OMP_NUM_THREADS", "-np", "2", "./app"});
    EXPECT_EQ(p.how, "-x");
    EXPECT_TRUE(p.environment.empty());
    EXPECT_EQ(p.command, (Command{"mpirun", "-x", "LD_PRELOAD", "-x", "STACKSAGE_OUTPUT", "-x", "STACKSAGE_TOPOLOGY",
                                  "-x", "OMP_NUM_THREADS", "-np", "2", "./app"}));
}

TEST_F(LauncherForwardingTest, OpenMpiAppendsToAnEnvironmentListOnItsCommandLine) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    const LaunchPlan p = plan({"mpirun", "--mca", "mca_base_env_list", "A;B", "./app"});
    EXPECT_EQ(p.command, (Command{"mpirun", "--mca", "mca_base_env_list",
                                  "A;B;LD_PRELOAD;STACKSAGE_OUTPUT;STACKSAGE_TOPOLOGY", "./app"}));
    EXPECT_TRUE(p.environment.empty());
}

// Debian: /usr/bin/mpirun -> /etc/alternatives/mpirun -> mpirun.openmpi.
TEST_F(LauncherForwardingTest, ALinkIsFollowedToTheRealLauncher) {
    const fs::path real = install("alt", "mpirun.openmpi");
    fs::create_directories(root_ / "links");
    fs::create_symlink(real, root_ / "links/mpirun");
    env_["PATH"] = (root_ / "links").string();
    EXPECT_EQ(plan({"mpirun", "./app"}).kind, LauncherKind::OpenMpi);
    EXPECT_EQ(plan({(root_ / "links/mpirun").string(), "./app"}).kind, LauncherKind::OpenMpi);  // an absolute path
}

TEST_F(LauncherForwardingTest, WrappersInFrontOfTheLauncherAreSeenThrough) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    const LaunchPlan p = plan({"env", "OMP_NUM_THREADS=2", "/usr/bin/time", "-v", "mpirun", "-np", "2", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::OpenMpi);
    EXPECT_EQ(p.program_index, 4u);
    EXPECT_EQ(p.processes, 2);
    EXPECT_EQ(plan({"timeout", "-s", "INT", "60", "nice", "-n", "5", "mpirun", "./app"}).kind, LauncherKind::OpenMpi);
    EXPECT_EQ(plan({"time", "./app"}).kind, LauncherKind::None);
    // `env -i` clears the variables: said, nothing forwarded.
    const LaunchPlan cleared = plan({"env", "-i", "PATH=/usr/bin", "mpirun", "./app"});
    EXPECT_EQ(cleared.remote, RemoteRecording::NotForwarded);
    ASSERT_EQ(cleared.warnings.size(), 1u);
    EXPECT_NE(cleared.warnings[0].find("env -i"), std::string::npos) << cleared.warnings[0];
}

TEST_F(LauncherForwardingTest, HostsAndHostFilesAreRecorded) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    const fs::path file = root_ / "hosts";
    std::ofstream(file) << "# the job's nodes\nn01 slots=4\nn02 slots=4 max_slots=8\n\nn01\n";
    LaunchPlan p = plan({"mpirun", "--hostfile", file.string(), "-H", "n03:2,n04", "-np", "8", "./app"});
    EXPECT_EQ(p.hosts, (Command{"n03", "n04", "n01", "n02"}));
    EXPECT_EQ(p.hostfile, file.string());
    EXPECT_EQ(p.processes, 8);
    p = plan({"mpirun", "--hostfile", (root_ / "missing").string(), "./app"});
    ASSERT_FALSE(p.notes.empty());
    EXPECT_NE(p.notes[0].find("cannot read the host file"), std::string::npos) << p.notes[0];
}

TEST_F(LauncherForwardingTest, MpichHydraGetsGenvWithTheValues) {
    install("mpich", "mpiexec.hydra", {"hydra_pmi_proxy", "mpichversion"});
    const LaunchPlan p = plan({"mpiexec.hydra", "-genvnone", "-f", "H", "-n", "4", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::MpichHydra);
    EXPECT_EQ(p.how, "-genv");
    EXPECT_EQ(p.command, (Command{"mpiexec.hydra", "-genv", "LD_PRELOAD", "/opt/stacksage/lib/libstacksage-preload.so",
                                  "-genv", "STACKSAGE_OUTPUT", "/shared/out", "-genv", "STACKSAGE_TOPOLOGY", "0",
                                  "-genvnone", "-f", "H", "-n", "4", "./app"}));
    EXPECT_EQ(p.processes, 4);
    EXPECT_EQ(p.hostfile, "H");
    // A plain mpiexec of MPICH is told by the files next to it.
    EXPECT_EQ(plan({"mpiexec", "-hosts", "a,b", "./app"}).kind, LauncherKind::UnknownRemote);
    install("mpich", "mpiexec", {"hydra_pmi_proxy"});
    const LaunchPlan plain = plan({"mpiexec", "-hosts", "a,b", "./app"});
    EXPECT_EQ(plain.kind, LauncherKind::MpichHydra);
    EXPECT_EQ(plain.hosts, (Command{"a", "b"}));
}

TEST_F(LauncherForwardingTest, IntelMpiIsHydraWithItsOwnInstall) {
    install("intel/oneapi/mpi/2021.10", "mpirun", {"mpiexec.hydra", "impi_info"});
    const LaunchPlan p = plan({"mpirun", "-genvlist", "OMP_NUM_THREADS", "-ppn", "2", "-n", "4", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::IntelMpi);
    EXPECT_EQ(std::string(launcher_kind_word(p.kind)), "intel-mpi");
    ASSERT_GE(p.command.size(), 4u);
    EXPECT_EQ(p.command[1], "-genv");
    EXPECT_EQ(p.command[2], "LD_PRELOAD");
    EXPECT_EQ(p.processes, 4);
    EXPECT_TRUE(p.warnings.empty());
    // Its node ranges and its host file from the environment are recorded.
    env_["I_MPI_HYDRA_HOST_FILE"] = (root_ / "impi-hosts").string();
    std::ofstream(root_ / "impi-hosts") << "m1:2\nm2:2\n";
    EXPECT_EQ(plan({"mpirun", "-hosts-group", "g[1-2]", "./app"}).hosts, (Command{"g1", "g2", "m1", "m2"}));
    // A variable the command excludes from the ranks is said before the job.
    const LaunchPlan excluded = plan({"mpirun", "-genvexcl", "FOO,LD_PRELOAD", "-n", "2", "./app"});
    ASSERT_EQ(excluded.warnings.size(), 1u);
    EXPECT_NE(excluded.warnings[0].find("excludes LD_PRELOAD"), std::string::npos) << excluded.warnings[0];
    EXPECT_EQ(excluded.remote, RemoteRecording::NotForwarded);
}

TEST_F(LauncherForwardingTest, FluxExportsTheEnvironmentUnlessItsRulesRemoveIt) {
    install("flux", "flux");
    LaunchPlan p = plan({"flux", "run", "-N", "2", "-n", "8", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::Flux);
    EXPECT_EQ(p.remote, RemoteRecording::Inherited);
    EXPECT_EQ(p.command, (Command{"flux", "run", "-N", "2", "-n", "8", "./app"}));
    EXPECT_EQ(p.processes, 8);
    EXPECT_EQ(p.nodes, 2);
    // Rules apply in order: ours come after the user's last one.
    p = plan({"flux", "submit", "--env-remove=*", "-n", "2", "--env", "PATH", "./app"});
    EXPECT_EQ(p.remote, RemoteRecording::Forwarded);
    EXPECT_EQ(p.command, (Command{"flux", "submit", "--env-remove=*", "-n", "2", "--env", "PATH", "--env=LD_PRELOAD",
                                  "--env=STACKSAGE_OUTPUT", "--env=STACKSAGE_TOPOLOGY", "./app"}));
    EXPECT_EQ(plan({"flux", "jobs"}).kind, LauncherKind::None);
}

// The lead hooks cli/srun_forwarding here: recognised, left as it is.
TEST_F(LauncherForwardingTest, SrunIsRecognisedAndLeftToItsOwnModule) {
    install("slurm", "srun");
    const LaunchPlan p = plan({"srun", "-n", "4", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::Srun);
    EXPECT_EQ(p.command, (Command{"srun", "-n", "4", "./app"}));
}

TEST_F(LauncherForwardingTest, LaunchersThatCannotCarryTheRecorderAreSaidBeforeTheJob) {
    install("tools", "pdsh");
    const LaunchPlan p = plan({"pdsh", "-w", "n[01-04]", "./app"});
    EXPECT_EQ(p.kind, LauncherKind::UnknownRemote);
    EXPECT_EQ(p.remote, RemoteRecording::NotForwarded);
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_NE(p.warnings[0].find("pdsh ... stacksage run -o /shared/out -- APP"), std::string::npos) << p.warnings[0];
    EXPECT_EQ(plan({"./app", "-np", "4"}).kind, LauncherKind::None);
}

// LD_PRELOAD names a link in a private directory of this host: no other host
// has it. It is not forwarded, and the user is told how to record them.
TEST_F(LauncherForwardingTest, APreloadLinkOfThisHostOnlyIsNotForwarded) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    recorder_.preload_is_host_local = true;
    const LaunchPlan p = plan({"mpirun", "-np", "4", "./app"});
    EXPECT_EQ(p.remote, RemoteRecording::NotForwarded);
    EXPECT_EQ(environment_value(p, "OMPI_MCA_mca_base_env_list"), "STACKSAGE_OUTPUT;STACKSAGE_TOPOLOGY");
    ASSERT_EQ(p.warnings.size(), 1u);
    EXPECT_NE(p.warnings[0].find("mpirun ... stacksage run"), std::string::npos) << p.warnings[0];
}

// mpirun inside a batch job that names no host runs on every allocated
// node: those are recorded, with where they came from.
TEST_F(LauncherForwardingTest, WithoutHostsOnTheCommandTheBatchAllocationsAreRecorded) {
    install("ompi", "mpirun", kOpenMpiSiblings);
    env_["SLURM_JOB_NODELIST"] = "n[01-02],gpu7";
    LaunchPlan p = plan({"mpirun", "-np", "8", "./app"});
    EXPECT_EQ(p.hosts, (Command{"n01", "n02", "gpu7"}));
    EXPECT_EQ(p.hosts_from, "SLURM_JOB_NODELIST");
    p = plan({"mpirun", "-H", "n02", "./app"});  // the command's own win
    EXPECT_EQ(p.hosts, (Command{"n02"}));
    EXPECT_EQ(p.hosts_from, "command");
    env_.erase("SLURM_JOB_NODELIST");
    const fs::path nodefile = root_ / "nodefile";
    std::ofstream(nodefile) << "c1\nc1\nc2\nc2\n";  // a line per slot
    env_["PBS_NODEFILE"] = nodefile.string();
    p = plan({"mpirun", "./app"});
    EXPECT_EQ(p.hosts, (Command{"c1", "c2"}));
    EXPECT_EQ(p.hosts_from, "PBS_NODEFILE");
    env_.erase("PBS_NODEFILE");
    p = plan({"mpirun", "./app"});
    EXPECT_TRUE(p.hosts.empty());
    EXPECT_EQ(p.hosts_from, "");
}

TEST(SlurmHostList, CompressedListsExpand) {
    EXPECT_EQ(expand_slurm_host_list("n01"), (Command{"n01"}));
    EXPECT_EQ(expand_slurm_host_list("n[01-03,07],login"), (Command{"n01", "n02", "n03", "n07", "login"}));
    EXPECT_EQ(expand_slurm_host_list("r[1-2]-n[08-10]"),
              (Command{"r1-n08", "r1-n09", "r1-n10", "r2-n08", "r2-n09", "r2-n10"}));
    EXPECT_EQ(expand_slurm_host_list("a[9-11]"), (Command{"a9", "a10", "a11"}));
    // Not a host list: nothing, rather than a guess.
    EXPECT_TRUE(expand_slurm_host_list("n[01-").empty());
    EXPECT_TRUE(expand_slurm_host_list("n[3-1]").empty());
    EXPECT_TRUE(expand_slurm_host_list("n[a-b]").empty());
    EXPECT_TRUE(expand_slurm_host_list("n[0-999999999]").empty());
}

}  // namespace
