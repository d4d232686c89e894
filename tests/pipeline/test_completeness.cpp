// Completeness is a finding: ranks and hosts of the job that left no log
// (incomplete-recording), nodes of the Slurm allocation that ran no rank
// (allocated-node-unused), and a host where only the launcher ran, shown as
// a launch host. Synthetic runs as the recorder writes them, loaded,
// analysed and reported.
#include <gtest/gtest.h>

#include "tests/support/analysed_run.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

std::vector<const Finding*> with_code(const AnalysisResult& a, FindingCode code) {
    std::vector<const Finding*> out;
    for (const Finding& f : a.findings)
        if (f.code == code) out.push_back(&f);
    return out;
}

// A rank of an Open MPI job on `host`, bound to `cpu`.
SyntheticProcess ompi_rank(const std::string& host, std::int64_t rank, const std::string& cpu) {
    SyntheticProcess p = busy_process(host, 1000 + rank, rank, 1, cpu);
    p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
    p.identity["PMIX_NAMESPACE"] = "prterun-h0-1234@1";
    return p;
}

// A task srun started on `host`, in a job of `ntasks` tasks.
SyntheticProcess srun_task(const std::string& host, std::int64_t rank, int ntasks, const std::string& cpu) {
    SyntheticProcess p = busy_process(host, 2000 + rank, rank, 1, cpu);
    p.identity["SLURM_PROCID"] = std::to_string(rank);
    p.identity["SLURM_JOB_ID"] = "77";
    p.identity["SLURM_STEP_ID"] = "0";
    p.identity["SLURM_NTASKS"] = std::to_string(ntasks);
    return p;
}

// A process's log with the parent it was started by.
void add_child_process(const TempDir& dir, const SyntheticProcess& p, std::int64_t ppid) {
    std::filesystem::create_directories(dir.path() / p.host);
    SyntheticRun::write_file(dir.path() / p.host / ("pid-" + std::to_string(p.pid) + ".jsonl"), [&] {
        std::string t = event_log_text(p);
        const std::string from = "\"ppid\":1,";
        t.replace(t.find(from), from.size(), "\"ppid\":" + std::to_string(ppid) + ",");
        return t;
    }());
}

}  // namespace

// MPI_COMM_WORLD had 4 ranks; 2 left logs.
TEST(Completeness, RanksMissingAgainstTheMpiWorldSize) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:2 pu:1");
    for (int r = 0; r < 2; ++r) {
        SyntheticProcess p = busy_process("n01", 100 + r, r, 1, std::to_string(r));
        p.mpi = true;
        p.mpi_size = 4;
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    const Finding& f = *found.front();
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.ranks, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(f.figure("ranks_expected"), 4);
    EXPECT_NE(f.message.find("2 of 4 ranks (ranks 2-3) left no log"), std::string::npos) << f.message;
    EXPECT_NE(f.detail.find("MPI_COMM_WORLD's size at MPI_Init"), std::string::npos) << f.detail;
    EXPECT_NE(f.suggestion.find("stacksage run -- "), std::string::npos) << f.suggestion;
    // First in the findings and in the text, before any node.
    EXPECT_EQ(r.analysis.findings.front().code, FindingCode::IncompleteRecording);
    EXPECT_LT(r.text.find("## ERROR ## The recording is incomplete"), r.text.find("+ Node n01"));
    EXPECT_NE(r.text.find("Analysis conclusion: 1 error(s)"), std::string::npos) << r.text;
    // JSON: the code, its severity and the missing ranks.
    const auto& j = r.json["findings"][0];
    EXPECT_EQ(j["code"], "incomplete-recording");
    EXPECT_EQ(j["severity"], "error");
    EXPECT_EQ(j["ranks"], nlohmann::json::array({2, 3}));
    EXPECT_TRUE(j["node"].is_null());
    EXPECT_EQ(r.json["summary"]["errors"], 1);
}

// Open MPI told each rank the job's size; rank 1's log is missing.
TEST(Completeness, RanksMissingAgainstOmpiCommWorldSize) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    for (int rank : {0, 2}) {
        SyntheticProcess p = ompi_rank("n01", rank, rank == 0 ? "0" : "1");
        p.identity["OMPI_COMM_WORLD_SIZE"] = "3";
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    EXPECT_EQ(found.front()->ranks, (std::vector<std::int64_t>{1}));
    EXPECT_NE(found.front()->message.find("1 of 3 ranks (rank 1)"), std::string::npos) << found.front()->message;
    EXPECT_NE(found.front()->detail.find("OMPI_COMM_WORLD_SIZE"), std::string::npos);
}

// srun's tasks: SLURM_NTASKS is the job's size. Under mpirun inside an
// allocation the same variable counts the allocation's tasks, not the job's.
TEST(Completeness, RanksMissingAgainstSlurmNtasksOnlyForTasksSrunStarted) {
    {
        TempDir dir;
        SyntheticRun run(dir.path());
        run.add_host("n01", "pack:1 core:2 pu:1");
        run.add_process(srun_task("n01", 0, 4, "0"));
        run.add_process(srun_task("n01", 1, 4, "1"));
        const ReportedRun r = report_of(dir.str());
        const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
        ASSERT_EQ(found.size(), 1u) << r.text;
        EXPECT_EQ(found.front()->ranks, (std::vector<std::int64_t>{2, 3}));
        EXPECT_NE(found.front()->detail.find("SLURM_NTASKS"), std::string::npos);
        EXPECT_NE(found.front()->suggestion.find("srun"), std::string::npos) << found.front()->suggestion;
    }
    {
        TempDir dir;
        SyntheticRun run(dir.path());
        run.add_host("n01", "pack:1 core:2 pu:1");
        for (int rank = 0; rank < 2; ++rank) {
            SyntheticProcess p = ompi_rank("n01", rank, std::to_string(rank));
            p.identity["OMPI_COMM_WORLD_SIZE"] = "2";
            p.identity["SLURM_PROCID"] = "0";
            p.identity["SLURM_STEP_ID"] = "0";
            p.identity["SLURM_NTASKS"] = "8";
            run.add_process(p);
        }
        const ReportedRun r = report_of(dir.str());
        EXPECT_TRUE(with_code(r.analysis, FindingCode::IncompleteRecording).empty()) << r.text;
    }
}

// The allocation's nodes: with ranks missing, the nodes without a log are
// named with them.
TEST(Completeness, HostsMissingFromTheSlurmNodeList) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    for (int rank = 0; rank < 2; ++rank) {
        SyntheticProcess p = srun_task("n01", rank, 4, std::to_string(rank));
        p.identity["SLURM_JOB_NODELIST"] = "n[01-03]";
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    EXPECT_EQ(found.front()->hosts, (std::vector<std::string>{"n02", "n03"}));
    EXPECT_NE(found.front()->message.find("2 hosts (n02, n03)"), std::string::npos) << found.front()->message;
    EXPECT_EQ(r.json["findings"][0]["hosts"], nlohmann::json::array({"n02", "n03"}));
    EXPECT_TRUE(with_code(r.analysis, FindingCode::AllocatedNodeUnused).empty());
}

// A node of the job step left no log: incomplete even with no size known.
TEST(Completeness, AStepNodeWithoutALogIsIncomplete) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = srun_task("n01.cluster", 0, 1, "0");
    p.host = "n01";
    p.identity.erase("SLURM_NTASKS");
    p.identity["SLURM_STEP_NODELIST"] = "n[01-02]";
    run.add_process(p);
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    EXPECT_EQ(found.front()->hosts, (std::vector<std::string>{"n02"}));
    EXPECT_TRUE(found.front()->ranks.empty());
}

// Every rank recorded, on 2 of the allocation's 3 nodes.
TEST(Completeness, AnAllocatedNodeThatRanNoRankIsAWarning) {
    TempDir dir;
    SyntheticRun run(dir.path());
    for (int rank = 0; rank < 2; ++rank) {
        const std::string host = "n0" + std::to_string(rank + 1);
        run.add_host(host, "pack:1 core:1 pu:1");
        SyntheticProcess p = srun_task(host, rank, 2, "0");
        p.identity["SLURM_JOB_NODELIST"] = "n[01-03]";
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    EXPECT_TRUE(with_code(r.analysis, FindingCode::IncompleteRecording).empty()) << r.text;
    const auto found = with_code(r.analysis, FindingCode::AllocatedNodeUnused);
    ASSERT_EQ(found.size(), 1u) << r.text;
    EXPECT_EQ(found.front()->severity, Severity::Warning);
    EXPECT_EQ(found.front()->hosts, (std::vector<std::string>{"n03"}));
    EXPECT_EQ(found.front()->node, "n03");  // a node of its own, though it left no directory
    EXPECT_NE(found.front()->message.find("Node n03 of the Slurm allocation ran no rank"), std::string::npos);
    EXPECT_EQ(r.json["findings"].back()["node"], "n03");
    EXPECT_NE(found.front()->suggestion.find("sbatch -N 2"), std::string::npos) << found.front()->suggestion;
    EXPECT_NE(r.text.find("## WARNING ## Node n03 of the Slurm allocation ran no rank"), std::string::npos) << r.text;
}

// mpirun on h0 started ranks on h1 only: h0 is the launch host, not judged.
TEST(Completeness, AHostWhereOnlyTheLauncherRanIsALaunchHost) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","2","--host","h1:2","./app"])");
    run.add_host("h0", "pack:1 core:2 pu:1");
    run.add_host("h1", "pack:1 core:2 pu:1");
    SyntheticProcess mpirun;
    mpirun.host = "h0";
    mpirun.pid = 50;
    mpirun.launcher = "mpirun";
    mpirun.exe = "/usr/bin/mpirun";
    mpirun.cmdline = {"mpirun", "-np", "2", "--host", "h1:2", "./app"};
    mpirun.cpuset = "0-1";
    mpirun.main_cpu_time_us = 1000;
    run.add_process(mpirun);
    SyntheticProcess ssh;  // how mpirun reached h1
    ssh.host = "h0";
    ssh.pid = 51;
    ssh.exe = "/usr/bin/ssh";
    ssh.cpuset = "0-1";
    ssh.main_cpu_time_us = 1000;
    add_child_process(dir, ssh, 50);
    for (int rank = 0; rank < 2; ++rank) {
        SyntheticProcess p = ompi_rank("h1", rank, std::to_string(rank));
        p.identity["OMPI_COMM_WORLD_SIZE"] = "2";
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    EXPECT_NE(r.text.find("+ Host h0: launch host (mpirun, ssh), no application process\n"), std::string::npos)
        << r.text;
    for (const Finding& f : r.analysis.findings) EXPECT_NE(f.node, "h0") << f.message;
    EXPECT_TRUE(with_code(r.analysis, FindingCode::IncompleteRecording).empty()) << r.text;
    EXPECT_EQ(r.json["nodes"][0]["launch_host"], true);
    EXPECT_EQ(r.json["nodes"][1]["launch_host"], false);
}

// `timeout 3600 mpirun ...` on h0, mpirun reaching h1 through a site's
// agent script (not named ssh): the idle wrapper and the agent, neither a
// rank, are the launch; h0 is a launch host, not judged.
TEST(Completeness, AWrapperAroundTheLauncherAndItsAgentAreTheLaunch) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["timeout","3600","mpirun","-np","2","--host","h1:2","./app"])");
    run.add_host("h0", "pack:1 core:2 pu:1");
    run.add_host("h1", "pack:1 core:2 pu:1");
    SyntheticProcess wrapper;
    wrapper.host = "h0";
    wrapper.pid = 49;
    wrapper.exe = "/usr/bin/timeout";
    wrapper.cpuset = "0-1";
    wrapper.main_cpu_time_us = 1000;  // 1 ms of 10 s: it waited
    run.add_process(wrapper);
    SyntheticProcess mpirun;
    mpirun.host = "h0";
    mpirun.pid = 50;
    mpirun.launcher = "mpirun";
    mpirun.exe = "/usr/bin/mpirun";
    mpirun.cpuset = "0-1";
    mpirun.main_cpu_time_us = 1000;
    add_child_process(dir, mpirun, 49);
    SyntheticProcess agent;  // plm_rsh_agent=/site/bin/remote-start
    agent.host = "h0";
    agent.pid = 51;
    agent.exe = "/site/bin/remote-start";
    agent.cpuset = "0-1";
    agent.main_cpu_time_us = 1000;
    add_child_process(dir, agent, 50);
    for (int rank = 0; rank < 2; ++rank) {
        SyntheticProcess p = ompi_rank("h1", rank, std::to_string(rank));
        p.identity["OMPI_COMM_WORLD_SIZE"] = "2";
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    EXPECT_NE(r.text.find("+ Host h0: launch host ("), std::string::npos) << r.text;
    for (const Finding& f : r.analysis.findings) EXPECT_NE(f.node, "h0") << f.message;
    EXPECT_EQ(r.json["nodes"][0]["launch_host"], true) << r.text;
}

// Under salloc (not an MPI launcher) the shell it started is the user's,
// and one that computes is judged like any application process; so is a
// parent of a launcher that computed itself.
TEST(Completeness, ASallocShellAndABusyParentOfALauncherAreJudged) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["salloc","-N","1","./compute.sh"])");
    run.add_host("h0", "pack:1 core:2 pu:1");
    SyntheticProcess salloc;
    salloc.host = "h0";
    salloc.pid = 60;
    salloc.launcher = "salloc";
    salloc.exe = "/usr/bin/salloc";
    salloc.cpuset = "0-1";
    salloc.main_cpu_time_us = 1000;
    run.add_process(salloc);
    SyntheticProcess shell = busy_process("h0", 61, -1, 1, "0-1");  // computes the whole time
    shell.exe = "/bin/bash";
    add_child_process(dir, shell, 60);
    SyntheticProcess srun;
    srun.host = "h0";
    srun.pid = 62;
    srun.launcher = "srun";
    srun.exe = "/usr/bin/srun";
    srun.cpuset = "0-1";
    srun.main_cpu_time_us = 1000;
    add_child_process(dir, srun, 61);
    const ReportedRun r = report_of(dir.str());
    EXPECT_EQ(r.json["nodes"][0]["launch_host"], false) << r.text;
    ASSERT_EQ(r.json["nodes"][0]["processes"].size(), 1u) << r.text;
    EXPECT_EQ(r.json["nodes"][0]["processes"][0]["pid"], 61) << r.text;
}

// mpirun's command line alone says 4 ranks on h1 and h2; h2's ranks left no
// log (ssh does not pass LD_PRELOAD): the advice puts stacksage run inside.
TEST(Completeness, MpirunsCommandLineGivesTheRanksAndHosts) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("h1", "pack:1 core:2 pu:1");
    SyntheticProcess mpirun;
    mpirun.host = "h1";
    mpirun.pid = 50;
    mpirun.launcher = "mpirun";
    mpirun.exe = "/usr/bin/mpirun";
    mpirun.cmdline = {"mpirun", "-np", "4", "--bind-to", "core", "--host", "h1:2,h2:2", "./app", "-n", "9"};
    mpirun.cpuset = "0-1";
    mpirun.main_cpu_time_us = 1000;
    run.add_process(mpirun);
    for (int rank = 0; rank < 2; ++rank) run.add_process(busy_process("h1", 100 + rank, rank, 1, std::to_string(rank)));
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    const Finding& f = *found.front();
    EXPECT_EQ(f.ranks, (std::vector<std::int64_t>{2, 3}));
    EXPECT_EQ(f.hosts, (std::vector<std::string>{"h2"}));
    EXPECT_NE(f.detail.find("mpirun -np"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("ssh does not pass LD_PRELOAD"), std::string::npos) << f.detail;
    EXPECT_NE(f.suggestion.find("mpirun -np 4 --bind-to core --host h1:2,h2:2 stacksage run -- ./app -n 9"),
              std::string::npos)
        << f.suggestion;
}

// Every rank the job had left a log: no completeness finding at all.
TEST(Completeness, ACompleteJobHasNoFinding) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","2","./app"])");
    run.add_host("n01", "pack:1 core:2 pu:1");
    for (int rank = 0; rank < 2; ++rank) {
        SyntheticProcess p = ompi_rank("n01", rank, std::to_string(rank));
        p.identity["OMPI_COMM_WORLD_SIZE"] = "2";
        p.identity["SLURM_JOB_NODELIST"] = "n01";
        p.mpi = true;
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    EXPECT_TRUE(with_code(r.analysis, FindingCode::IncompleteRecording).empty()) << r.text;
    EXPECT_TRUE(with_code(r.analysis, FindingCode::AllocatedNodeUnused).empty()) << r.text;
    EXPECT_EQ(r.analysis.count(Severity::Error), 0u) << r.text;
}

// srun --export=NONE: the tasks got no LD_PRELOAD and left no log at all;
// srun's own log says how many there were and where.
TEST(Completeness, SrunExportNoneIsTheLikelyCause) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("login1", "pack:1 core:2 pu:1");
    SyntheticProcess srun;
    srun.host = "login1";
    srun.pid = 60;
    srun.launcher = "srun";
    srun.exe = "/usr/bin/srun";
    srun.cmdline = {"srun", "-n", "4", "--export=NONE", "./app"};
    srun.cpuset = "0-1";
    srun.main_cpu_time_us = 1000;
    srun.identity["SLURM_JOB_ID"] = "77";
    srun.identity["SLURM_JOB_NODELIST"] = "n[01-02]";
    run.add_process(srun);
    const ReportedRun r = report_of(dir.str());
    const auto found = with_code(r.analysis, FindingCode::IncompleteRecording);
    ASSERT_EQ(found.size(), 1u) << r.text;
    const Finding& f = *found.front();
    EXPECT_EQ(f.ranks, (std::vector<std::int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(f.hosts, (std::vector<std::string>{"n01", "n02"}));
    EXPECT_NE(f.detail.find("srun --export=NONE"), std::string::npos) << f.detail;
    EXPECT_NE(f.suggestion.find("srun -n 4 stacksage run -- ./app"), std::string::npos) << f.suggestion;
    EXPECT_NE(r.text.find("+ Host login1: launch host (srun), no application process"), std::string::npos) << r.text;
}
