// Jobs across several hosts, on this one machine: Open MPI's rsh launch
// with its agent (plm_rsh_agent) replaced by a script that starts each
// "host" like ssh would, in a UTS namespace of its own (its own host name,
// so the recorder writes into OUT/<host>/) and with a login environment
// (`env -i` with HOME, PATH, USER, SHELL): LD_PRELOAD and STACKSAGE_* reach
// the ranks there only when the launcher carries them.
//
// The simulated hosts share this machine's CPUs. The verdicts checked are
// about each host's own placement (threads per CPU it was given, cores no
// thread may use), not about which host won CPU time from another. The
// programs compute for 1 s: a main thread kept waiting for a CPU between
// pthread_create and pthread_join on this loaded 2-core machine stays under
// the analyzer's threshold (5 % of the node's run; 0.5 s runs were flagged
// once in about 20 runs beside two busy loops).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "parsers/node_file_reader.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace fs = std::filesystem;

namespace {

using stacksage::testing::Shell;
using stacksage::testing::shell;
using stacksage::testing::TempDir;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";
const std::string kBusy = kBin + "/examples/busy_threads";

// Like `ssh [OPTIONS] HOST COMMAND` (Hydra passes -x): a new UTS namespace
// named HOST, a login environment, the command run by a shell. Like ssh's
// client, the agent starts traced on the submit host (it inherits
// LD_PRELOAD from the launcher) and is the launch's plumbing there; the
// simulated host's login gets none of the submit host's environment.
constexpr const char* kFakeSsh = R"sh(#!/bin/sh
while [ "${1#-}" != "$1" ]; do shift; done
host=$1; shift
exec env -u LD_PRELOAD unshare --uts sh -c 'hostname "$0" && exec env -i HOME="$HOME" PATH=/usr/local/bin:/usr/bin:/bin USER="$(id -un)" SHELL=/bin/sh /bin/sh -c "$*"' "$host" "$@"
)sh";

// Why this machine cannot run the tests, or "".
std::string missing_facility() {
    if (!stacksage::testing::is_executable(kCli) || !stacksage::testing::is_executable(kBusy))
        return "stacksage or examples/busy_threads is not built";
    if (stacksage::testing::which("mpirun").empty()) return "no mpirun (Open MPI) on PATH";
    if (shell("mpirun --version").output.find("Open MPI") == std::string::npos) return "mpirun is not Open MPI's";
    if (stacksage::testing::which("unshare").empty()) return "no unshare (util-linux)";
    const Shell uts = shell("unshare --uts sh -c 'hostname stacksage-probe && hostname'");
    if (uts.exit_code != 0 || uts.output.find("stacksage-probe") == std::string::npos)
        return "new UTS namespaces are not permitted here (unshare --uts: " + uts.output + ")";
    return "";
}

#define REQUIRE_HOSTS()                             \
    do {                                            \
        const std::string why = missing_facility(); \
        if (!why.empty()) GTEST_SKIP() << why;      \
    } while (0)

class MultiHostLaunch : public ::testing::Test {
protected:
    void SetUp() override {
        agent_ = dir_.path() / "fake-ssh";
        std::ofstream(agent_) << kFakeSsh;
        fs::permissions(agent_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    }

    // A host file: "NAME slots=N" lines.
    std::string hostfile(const std::vector<std::pair<std::string, int>>& hosts) {
        const fs::path file = dir_.path() / "hosts";
        std::ofstream out(file);
        for (const auto& [name, slots] : hosts) out << name << " slots=" << slots << "\n";
        return file.string();
    }

    // mpirun with the fake ssh, as root may run it.
    std::string mpirun(const std::string& options) const {
        return std::string("timeout 60 mpirun") + (::geteuid() == 0 ? " --allow-run-as-root" : "") +
               " --mca plm_rsh_agent " + agent_.string() + " " + options;
    }

    std::string out() const { return (dir_.path() / "out").string(); }

    nlohmann::json report() const {
        const Shell r = shell(kCli + " report " + out() + " --format json");
        EXPECT_EQ(r.exit_code, 0) << r.output;
        return nlohmann::json::parse(r.output, nullptr, false);
    }

    // The ranks whose logs are streams of OUT/<host>/node.events (the rank
    // in each stream's region header).
    std::set<int> ranks_on(const std::string& host) const {
        std::set<int> ranks;
        auto node = stacksage::read_node_file((fs::path(out()) / host / "node.events").string(), "node.events",
                                              stacksage::formats::node_file::FileKind::events);
        if (node)
            for (const auto& s : node->streams)
                if (s.rank >= 0) ranks.insert(static_cast<int>(s.rank));
        return ranks;
    }

    TempDir dir_;
    fs::path agent_;
};

std::vector<nlohmann::json> findings_on(const nlohmann::json& report, const std::string& node,
                                        const std::string& code) {
    std::vector<nlohmann::json> out;
    for (const auto& f : report["findings"])
        if (f["node"] == node && f["code"] == code) out.push_back(f);
    return out;
}

const nlohmann::json* node_named(const nlohmann::json& report, const std::string& host) {
    for (const auto& n : report["nodes"])
        if (n["host"] == host) return &n;
    return nullptr;
}

// This machine, where only the launcher and its remote shells ran, is a
// launch host: shown as one, never judged (no finding on it).
void expect_submit_host_only_launched(const nlohmann::json& report) {
    char name[256] = {};
    ASSERT_EQ(gethostname(name, sizeof name - 1), 0);
    const nlohmann::json* submit = node_named(report, name);
    ASSERT_NE(submit, nullptr) << report["nodes"].dump(1);
    EXPECT_EQ((*submit)["launch_host"], true) << submit->dump(1);
    EXPECT_TRUE((*submit)["processes"].empty()) << submit->dump(1);
    for (const auto& f : report["findings"]) EXPECT_NE(f["node"], name) << f.dump(1);
}

// `stacksage run -- mpirun --hostfile H ...`: mpirun carries the recorder's
// variables to the ranks on both hosts (mca_base_env_list); without it, the
// login environment of each host would leave them untraced.
TEST_F(MultiHostLaunch, RunAroundMpirunRecordsEveryRankOnEveryHost) {
    REQUIRE_HOSTS();
    const std::string hosts = hostfile({{"node-a", 2}, {"node-b", 2}});
    const Shell run = shell(kCli + " run -o " + out() + " -- " + mpirun("--bind-to none --hostfile " + hosts) +
                            " -np 4 " + kBusy + " 1 0.1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("carries LD_PRELOAD, STACKSAGE_OUTPUT"), std::string::npos) << run.output;
    EXPECT_EQ(ranks_on("node-a"), (std::set<int>{0, 1})) << run.output;
    EXPECT_EQ(ranks_on("node-b"), (std::set<int>{2, 3})) << run.output;

    // run.json says which launcher ran, on which hosts, and how the recorder got there.
    std::ifstream in(fs::path(out()) / "run.json");
    const nlohmann::json run_json = nlohmann::json::parse(in, nullptr, false);
    ASSERT_TRUE(run_json["launch"].is_object()) << run_json.dump(1);
    const auto& launch = run_json["launch"];
    EXPECT_EQ(launch["launcher"], "openmpi");
    EXPECT_EQ(launch["remote_ranks"], "forwarded");
    EXPECT_EQ(launch["forwarded_by"], "OMPI_MCA_mca_base_env_list");
    EXPECT_EQ(launch["hosts"], (nlohmann::json{"node-a", "node-b"}));
    EXPECT_EQ(launch["processes"], 4);
    expect_submit_host_only_launched(report());
}

// The command already uses -x (Open MPI refuses -x mixed with
// mca_base_env_list): the recorder's variables go as -x too, and the user's
// own variable still arrives.
TEST_F(MultiHostLaunch, RunAroundMpirunWithDashXAddsItsOwn) {
    REQUIRE_HOSTS();
    const std::string hosts = hostfile({{"node-a", 1}, {"node-b", 1}});
    const Shell run =
        shell("MY_SETTING=kept " + kCli + " run -o " + out() + " -- " + mpirun("-x MY_SETTING --hostfile " + hosts) +
              " -np 2 sh -c 'echo \"$(hostname):$MY_SETTING\"'");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("node-a:kept"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("node-b:kept"), std::string::npos) << run.output;
    // sh is a rank too: each host recorded its own.
    EXPECT_EQ(ranks_on("node-a"), (std::set<int>{0})) << run.output;
    EXPECT_EQ(ranks_on("node-b"), (std::set<int>{1})) << run.output;
}

// MPICH's Hydra (`mpiexec.hydra`, Debian's mpich) reaching its hosts
// through the same remote shell: `run` hands the recorder's variables to
// every rank with -genv; the ranks on both hosts are recorded with the rank
// Hydra gives them (PMI_RANK), and the submit host only launched.
TEST_F(MultiHostLaunch, RunAroundHydraRecordsEveryRankOnEveryHost) {
    REQUIRE_HOSTS();
    const std::string hydra = stacksage::testing::which("mpiexec.hydra");
    if (hydra.empty()) GTEST_SKIP() << "no mpiexec.hydra (Debian's mpich)";
    const Shell run = shell(kCli + " run -o " + out() + " -- timeout 60 " + hydra + " -launcher ssh -launcher-exec " +
                            agent_.string() + " -hosts node-a:2,node-b:1 -n 3 " + kBusy + " 1 0.1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("carries LD_PRELOAD, STACKSAGE_OUTPUT to its ranks on every host (-genv)"),
              std::string::npos)
        << run.output;
    EXPECT_EQ(ranks_on("node-a"), (std::set<int>{0, 1})) << run.output;
    EXPECT_EQ(ranks_on("node-b"), (std::set<int>{2})) << run.output;
    std::ifstream in(fs::path(out()) / "run.json");
    const nlohmann::json run_json = nlohmann::json::parse(in, nullptr, false);
    EXPECT_EQ(run_json["launch"]["launcher"], "mpich-hydra") << run_json.dump(1);
    EXPECT_EQ(run_json["launch"]["hosts"], (nlohmann::json{"node-a", "node-b"})) << run_json.dump(1);
    const nlohmann::json r = report();
    EXPECT_TRUE(findings_on(r, "node-a", "incomplete-recording").empty()) << r["findings"].dump(1);
    expect_submit_host_only_launched(r);
}

// `mpirun --hostfile H ... stacksage run -o DIR -- ./app`: each rank's own
// `stacksage run` preloads the recorder on its host; all share DIR.
TEST_F(MultiHostLaunch, StacksageRunUnderMpirunRecordsEveryRankOnEveryHost) {
    REQUIRE_HOSTS();
    const std::string hosts = hostfile({{"node-a", 2}, {"node-b", 1}});
    const Shell run = shell(mpirun("--bind-to none --hostfile " + hosts) + " -np 3 " + kCli + " run -q -o " + out() +
                            " -- " + kBusy + " 1 0.1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(ranks_on("node-a"), (std::set<int>{0, 1})) << run.output;
    EXPECT_EQ(ranks_on("node-b"), (std::set<int>{2})) << run.output;
    EXPECT_TRUE(fs::exists(fs::path(out()) / "run.json"));
}

// Per-node verdicts across hosts, from one job with a program of its own per
// host (MPMD): 4 threads on node-a's 2 cores over-subscribe them; node-b's
// single thread, held to cpu 0, leaves cpu 1 idle. Neither verdict leaks to
// the other host.
TEST_F(MultiHostLaunch, OverloadOnOneHostIdleCoresOnAnother) {
    REQUIRE_HOSTS();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
    const std::string hosts = hostfile({{"node-a", 1}, {"node-b", 1}});
    const Shell run = shell(kCli + " run -q -o " + out() + " -- " + mpirun("--bind-to none --hostfile " + hosts) +
                            " -np 1 -host node-a taskset -c 0,1 " + kBusy +
                            " 4 1.0 : -np 1 -host node-b taskset -c 0 " + kBusy + " 1 1.0");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const nlohmann::json r = report();
    ASSERT_FALSE(r.is_discarded());
    const auto overloaded_a = findings_on(r, "node-a", "overloaded-resources");
    ASSERT_EQ(overloaded_a.size(), 1u) << r["findings"].dump(1);
    EXPECT_EQ(overloaded_a[0]["resources"], "0-1");
    EXPECT_TRUE(findings_on(r, "node-a", "idle-resources").empty()) << r["findings"].dump(1);
    EXPECT_TRUE(findings_on(r, "node-b", "overloaded-resources").empty()) << r["findings"].dump(1);
    const auto idle_b = findings_on(r, "node-b", "idle-resources");
    ASSERT_EQ(idle_b.size(), 1u) << r["findings"].dump(1);
    EXPECT_EQ(idle_b[0]["resources"], "1");
}

// Ranks spread unevenly by the host file: 3 single-threaded ranks on
// node-a's 2 cores, 1 on node-b's. node-a is over-subscribed, node-b is not.
TEST_F(MultiHostLaunch, UnevenSpreadOverloadsOnlyTheCrowdedHost) {
    REQUIRE_HOSTS();
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs two CPUs";
    const std::string hosts = hostfile({{"node-a", 3}, {"node-b", 1}});
    const Shell run = shell(kCli + " run -q -o " + out() + " -- " + mpirun("--bind-to none --hostfile " + hosts) +
                            " -np 4 taskset -c 0,1 " + kBusy + " 1 1.0");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(ranks_on("node-a"), (std::set<int>{0, 1, 2})) << run.output;
    EXPECT_EQ(ranks_on("node-b"), (std::set<int>{3})) << run.output;
    const nlohmann::json r = report();
    ASSERT_FALSE(r.is_discarded());
    const nlohmann::json* a = node_named(r, "node-a");
    const nlohmann::json* b = node_named(r, "node-b");
    ASSERT_TRUE(a && b) << r["nodes"].dump(1);
    EXPECT_EQ((*a)["processes"].size(), 3u);
    EXPECT_EQ((*b)["processes"].size(), 1u);
    const auto overloaded_a = findings_on(r, "node-a", "overloaded-resources");
    ASSERT_EQ(overloaded_a.size(), 1u) << r["findings"].dump(1);
    EXPECT_EQ(overloaded_a[0]["resources"], "0-1");
    EXPECT_TRUE(findings_on(r, "node-b", "overloaded-resources").empty()) << r["findings"].dump(1);
}

// The recorder installed under a path with a space: LD_PRELOAD names a link
// in a private directory of the submit host, which the other hosts lack.
// It is not forwarded (no ld.so error in every remote rank), and `run` says
// before the job that those ranks will not be recorded, with the form that
// records them.
TEST_F(MultiHostLaunch, APreloadLinkOfTheSubmitHostIsNotSentToOtherHosts) {
    REQUIRE_HOSTS();
    const fs::path install = dir_.path() / "my tools";
    fs::create_directories(install);
    for (const char* library : {"libstacksage-preload.so", "libstacksage-model.so"})
        fs::copy_file(fs::path(kBin) / "preload" / library, install / library);  // a link would be resolved
    const std::string hosts = hostfile({{"node-a", 1}, {"node-b", 1}});
    const Shell run = shell("STACKSAGE_PRELOAD='" + (install / "libstacksage-preload.so").string() + "' " + kCli +
                            " run -o " + out() + " -- " + mpirun("--hostfile " + hosts) + " -np 2 " + kBusy + " 1 0.1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto warning = run.output.find("warning: the recorder's installed path holds a space or colon");
    ASSERT_NE(warning, std::string::npos) << run.output;
    EXPECT_LT(warning, run.output.find("busy_threads: 1 threads computed")) << "said before the job: " << run.output;
    EXPECT_NE(run.output.find("mpirun ... stacksage run -o " + out() + " -- APP"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("cannot be preloaded"), std::string::npos) << run.output;
    EXPECT_TRUE(ranks_on("node-a").empty()) << run.output;
}

// A launcher that cannot carry the recorder to other hosts is said before
// the job starts, and the job still runs as given.
TEST(LaunchWarnings, AnUnknownRemoteLauncherIsSaidBeforeTheJobStarts) {
    if (!stacksage::testing::is_executable(kCli)) GTEST_SKIP() << "stacksage is not built";
    TempDir dir;
    const fs::path pdsh = dir.path() / "pdsh";
    std::ofstream(pdsh) << "#!/bin/sh\necho 'pdsh ran'\n";
    fs::permissions(pdsh, fs::perms::owner_all);
    const Shell run =
        shell("PATH=" + dir.str() + ":$PATH " + kCli + " run -o " + dir.str() + "/out -- pdsh -w n[01-04] ./app");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const auto warning = run.output.find("warning: pdsh may start processes on other hosts");
    ASSERT_NE(warning, std::string::npos) << run.output;
    EXPECT_LT(warning, run.output.find("pdsh ran")) << run.output;
    EXPECT_NE(run.output.find("pdsh ... stacksage run -o " + dir.str() + "/out -- APP"), std::string::npos)
        << run.output;
    std::ifstream in(dir.path() / "out" / "run.json");
    const nlohmann::json run_json = nlohmann::json::parse(in, nullptr, false);
    EXPECT_EQ(run_json["launch"]["launcher"], "unknown-remote") << run_json.dump(1);
    EXPECT_EQ(run_json["launch"]["remote_ranks"], "not-forwarded") << run_json.dump(1);
}

}  // namespace

// Hosts named after nodes of a real cluster (PlaFRIM: mirage001 and
// mirage002 under one Voltaire switch, fourmi010 under another), joined end
// to end to that cluster's real fabric dump: the recorder's topologies of
// this machine name no InfiniBand adapter, so the join is by host name in
// the adapters' node descriptions (docs/network.md).
TEST_F(MultiHostLaunch, HostsOfARealFabricAreJoinedToIt) {
    REQUIRE_HOSTS();
    const std::string hosts = hostfile({{"mirage001", 1}, {"mirage002", 1}, {"fourmi010", 1}});
    const Shell run = shell(kCli + " run -o " + out() + " -- " + mpirun("--bind-to none --hostfile " + hosts) +
                            " -np 3 " + kBusy + " 1 0.1");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    const std::string fabric = std::string(STACKSAGE_TEST_DATA_DIR) + "/network/hwloc-netloc-plafrim";
    const Shell r = shell(kCli + " report " + out() + " --format json --network " + fabric);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const nlohmann::json report = nlohmann::json::parse(r.output, nullptr, false);
    ASSERT_TRUE(report.contains("network")) << r.output;
    const auto& net = report["network"];
    std::set<std::string> joined;
    for (const auto& j : net["joined"]) {
        joined.insert(j["host"].get<std::string>());
        EXPECT_EQ(j["method"], "node-description") << j.dump();
    }
    // The submit host (this machine, mpirun only) is a launch host, not placed.
    EXPECT_EQ(joined, (std::set<std::string>{"mirage001", "mirage002", "fourmi010"})) << net.dump(1);
    EXPECT_EQ(net["leaf_switches"]["used"], 2);
    EXPECT_EQ(net["leaf_switches"]["needed"], 1);
    EXPECT_EQ(net["hops"]["pairs"], 3);
    bool spread = false;
    for (const auto& f : report["findings"])
        if (f["code"] == "network-spread") {
            spread = true;
            EXPECT_EQ(f["remedy"]["launcher_options"], (nlohmann::json{"--switches=1"})) << f.dump();
        }
    EXPECT_TRUE(spread) << r.output;
}
