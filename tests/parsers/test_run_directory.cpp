// The run directory's one owner: layout names, the scan (hosts in natural
// order, logs grouped by pid, ranks first), run.json written and read back,
// the claim, and the job id and rank read from an environment.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "core/formats/launcher_environment.hpp"
#include "parsers/run_directory.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace fs = std::filesystem;

namespace {

void touch(const fs::path& path, const std::string& text = "{}\n") {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << text;
}

// An environment given as a map: what a detection sees.
struct FakeEnvironment {
    std::map<std::string, std::string> values;
    EnvironmentLookup lookup() const {
        return [this](const char* name) -> const char* {
            auto it = values.find(name);
            return it == values.end() ? nullptr : it->second.c_str();
        };
    }
};

}  // namespace

TEST(RunLayout, LogNamesGiveTheirPidRankAndImageNumber) {
    EXPECT_EQ(parse_log_file_name("rank-0003.pid-4711.jsonl").pid, 4711);
    EXPECT_EQ(parse_log_file_name("rank-0003.pid-4711.jsonl").rank, 3);
    EXPECT_EQ(parse_log_file_name("pid-12.jsonl").rank, -1);
    EXPECT_EQ(parse_log_file_name("app.jsonl").pid, -1);
    EXPECT_EQ(image_number("n01/pid-4711.jsonl"), 0);
    EXPECT_EQ(image_number("n01/pid-4711.2.jsonl"), 2);
    EXPECT_EQ(image_number("n01/rank-0001.pid-4711.13.jsonl"), 13);
    EXPECT_TRUE(is_event_log_name("pid-1.jsonl"));
    EXPECT_FALSE(is_event_log_name("pid-1.samples.jsonl"));
    EXPECT_FALSE(is_event_log_name("pid-1.model.json"));
    EXPECT_FALSE(is_event_log_name(run_layout::kTopologyXml));
    EXPECT_EQ(samples_file_of("n01/pid-7.jsonl"), "n01/pid-7.samples.jsonl");
    EXPECT_EQ(samples_file_of("n01/pid-7.1.jsonl"), "n01/pid-7.1.samples.jsonl");
    EXPECT_EQ(model_file_of("rank-0003.pid-7.jsonl"), "rank-0003.pid-7.model.json");
    EXPECT_EQ(model_file_of("pid-7"), "pid-7.model.json");
}

TEST(RunLayout, NaturalOrderComparesDigitRunsAsNumbers) {
    EXPECT_TRUE(natural_less("n2", "n10"));
    EXPECT_FALSE(natural_less("n10", "n2"));
    EXPECT_TRUE(natural_less("n02", "n10"));
    EXPECT_TRUE(natural_less("a", "b"));
    EXPECT_TRUE(natural_less("n1", "n1a"));
    EXPECT_FALSE(natural_less("n1", "n1"));
}

TEST(RunDirectoryScan, HostsInNaturalOrderLogsByPidRanksFirst) {
    TempDir dir;
    touch(dir.path() / "n10" / "pid-5.jsonl");
    touch(dir.path() / "n2" / "rank-0001.pid-30.jsonl");
    touch(dir.path() / "n2" / "rank-0000.pid-40.jsonl");
    touch(dir.path() / "n2" / "pid-20.jsonl");
    touch(dir.path() / "n2" / "pid-10.jsonl");
    touch(dir.path() / "n2" / "pid-10.1.jsonl");
    touch(dir.path() / "n2" / "pid-10.samples.jsonl");
    touch(dir.path() / "n2" / "pid-10.model.json");
    touch(dir.path() / "n2" / "topology.xml", "<topology/>");
    touch(dir.path() / "only-topology" / "topology.xml", "<topology/>");
    fs::create_directories(dir.path() / "empty");
    touch(dir.path() / "run.json");

    Result<RunDirectoryScan> scan = scan_run_directory(dir.str());
    ASSERT_TRUE(scan) << scan.error().message;
    ASSERT_EQ(scan->hosts.size(), 3u);  // "empty" holds nothing of a host
    EXPECT_EQ(scan->hosts[0].name, "n2");
    EXPECT_EQ(scan->hosts[1].name, "n10");
    EXPECT_EQ(scan->hosts[2].name, "only-topology");
    EXPECT_EQ(scan->logs, 6u);

    const ScannedHost& n2 = scan->hosts[0];
    EXPECT_TRUE(n2.has_topology_file);
    EXPECT_FALSE(scan->hosts[1].has_topology_file);
    EXPECT_EQ(n2.sample_files.count("n2/pid-10.samples.jsonl"), 1u);
    ASSERT_EQ(n2.processes.size(), 4u);
    EXPECT_EQ(n2.processes[0].rank, 0);
    EXPECT_EQ(n2.processes[0].pid, 40);
    EXPECT_EQ(n2.processes[1].rank, 1);
    EXPECT_EQ(n2.processes[2].pid, 10);
    ASSERT_EQ(n2.processes[2].files.size(), 2u);  // both images of pid 10
    EXPECT_EQ(n2.processes[3].pid, 20);
    EXPECT_EQ(n2.processes[0].files.front(), "n2/rank-0000.pid-40.jsonl");
}

TEST(RunDirectoryScan, NoLogsOrNoDirectoryIsAnError) {
    TempDir dir;
    Result<RunDirectoryScan> empty = scan_run_directory(dir.str());
    ASSERT_FALSE(empty);
    EXPECT_NE(empty.error().message.find("holds no event logs"), std::string::npos);
    Result<RunDirectoryScan> missing = scan_run_directory((dir.path() / "nothing").string());
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("no such directory"), std::string::npos);
    touch(dir.path() / "file");
    Result<RunDirectoryScan> file = scan_run_directory((dir.path() / "file").string());
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message.find("is not a directory"), std::string::npos);
}

TEST(RunRecord, WrittenAndReadBack) {
    TempDir dir;
    RunRecord record;
    record.command = {"mpirun", "-np", "4", "./app with space"};
    record.start_iso8601 = "2026-11-25T22:34:56Z";
    record.start_realtime_ns = 1764110096000000000;
    record.tool_version = "9.8.7";
    record.host = "n01";
    record.cwd = "/home/me";
    record.output = dir.str();
    record.job_id = "4711.0";
    std::string error;
    ASSERT_EQ(claim_run_directory(dir.path(), run_record_text(record), "", false, error), RunDirectoryClaim::Ours)
        << error;

    const RunRecordRead read = read_run_record(dir.str());
    ASSERT_EQ(read.problem, RunRecordRead::Problem::None) << read.reason;
    ASSERT_TRUE(read.fields.command);
    EXPECT_EQ(*read.fields.command, record.command);
    EXPECT_EQ(read.fields.start_iso8601, record.start_iso8601);
    EXPECT_EQ(read.fields.tool_version, record.tool_version);
    EXPECT_EQ(read.fields.job_id, record.job_id);
    EXPECT_EQ(read.fields.version, 1);

    record.job_id.clear();  // outside a job: null, read as absent
    touch(dir.path() / run_layout::kRunJson, run_record_text(record));
    EXPECT_FALSE(read_run_record(dir.str()).fields.job_id);
}

// The launcher of the run, as `stacksage run` planned its forwarding: what
// a report needs to tell hosts that ran ranks but recorded nothing.
TEST(RunRecord, TheLaunchIsWrittenAndReadBack) {
    TempDir dir;
    RunRecord record;
    record.command = {"mpirun", "--hostfile", "H", "-np", "4", "./app"};
    EXPECT_NE(run_record_text(record).find("\"launch\": null"), std::string::npos);  // no launcher
    LaunchRecord launch;
    launch.launcher = "openmpi";
    launch.program = "mpirun";
    launch.remote_ranks = "forwarded";
    launch.forwarded_by = "OMPI_MCA_mca_base_env_list";
    launch.variables = {"LD_PRELOAD", "STACKSAGE_OUTPUT"};
    launch.hosts = {"n01", "n02"};
    launch.hostfile = "H";
    launch.processes = 4;
    launch.command = record.command;
    record.launch = launch;
    touch(dir.path() / run_layout::kRunJson, run_record_text(record));
    const RunRecordRead read = read_run_record(dir.str());
    ASSERT_EQ(read.problem, RunRecordRead::Problem::None) << read.reason;
    ASSERT_TRUE(read.fields.launch);
    const LaunchRecord& back = *read.fields.launch;
    EXPECT_EQ(back.launcher, "openmpi");
    EXPECT_EQ(back.program, "mpirun");
    EXPECT_EQ(back.remote_ranks, "forwarded");
    EXPECT_EQ(back.forwarded_by, "OMPI_MCA_mca_base_env_list");
    EXPECT_EQ(back.variables, launch.variables);
    EXPECT_EQ(back.hosts, launch.hosts);
    EXPECT_EQ(back.hostfile, "H");
    EXPECT_EQ(back.processes, 4);
    EXPECT_EQ(back.nodes, -1);  // null: not given
    EXPECT_EQ(back.command, launch.command);
    // Fields of the wrong type are left out, not guessed.
    touch(dir.path() / run_layout::kRunJson, "{\"launch\": {\"launcher\": 3, \"hosts\": \"n01\", \"processes\": -2}}");
    const RunRecordRead odd = read_run_record(dir.str());
    ASSERT_TRUE(odd.fields.launch);
    EXPECT_EQ(odd.fields.launch->launcher, "");
    EXPECT_TRUE(odd.fields.launch->hosts.empty());
    EXPECT_EQ(odd.fields.launch->processes, -1);
}

TEST(RunRecord, MissingAndCorruptAreTold) {
    TempDir dir;
    EXPECT_EQ(read_run_record(dir.str()).problem, RunRecordRead::Problem::Missing);
    touch(dir.path() / "run.json", "{\"command\": [");
    EXPECT_EQ(read_run_record(dir.str()).problem, RunRecordRead::Problem::NotAnObject);
    fs::remove(dir.path() / "run.json");
    ASSERT_EQ(::mkfifo((dir.path() / "run.json").c_str(), 0600), 0);
    const RunRecordRead fifo = read_run_record(dir.str());
    EXPECT_EQ(fifo.problem, RunRecordRead::Problem::Unreadable);
    EXPECT_FALSE(fifo.reason.empty());
}

TEST(RunDirectoryClaim, OneRunPerDirectoryExceptTheRanksOfItsJob) {
    TempDir dir;
    RunRecord record;
    record.job_id = "77";
    const std::string text = run_record_text(record);
    std::string error;
    EXPECT_EQ(claim_run_directory(dir.path() / "out", text, "77", true, error), RunDirectoryClaim::Ours);
    EXPECT_EQ(claim_run_directory(dir.path() / "out", text, "77", true, error), RunDirectoryClaim::Joined);
    EXPECT_EQ(claim_run_directory(dir.path() / "out", text, "77", false, error), RunDirectoryClaim::Taken);
    EXPECT_EQ(claim_run_directory(dir.path() / "out", text, "78", true, error), RunDirectoryClaim::Taken);
    EXPECT_EQ(claim_run_directory(dir.path() / "out", text, "", false, error), RunDirectoryClaim::Taken);
    // No temporary file is left behind.
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path() / "out")) ++entries;
    EXPECT_EQ(entries, 1u);
    touch(dir.path() / "file");
    EXPECT_EQ(claim_run_directory(dir.path() / "file" / "out", text, "", false, error), RunDirectoryClaim::Failed);
    EXPECT_FALSE(error.empty());
}

TEST(LauncherEnvironment, RankFromTheFirstVariableHoldingANumber) {
    FakeEnvironment env;
    EXPECT_EQ(rank_from_environment(env.lookup()), -1);
    env.values["SLURM_PROCID"] = "5";
    EXPECT_EQ(rank_from_environment(env.lookup()), 5);
    env.values["PMIX_RANK"] = "3";
    EXPECT_EQ(rank_from_environment(env.lookup()), 3);  // PMIx before Slurm
    env.values["OMPI_COMM_WORLD_RANK"] = "not a number";
    EXPECT_EQ(rank_from_environment(env.lookup()), 3);
    env.values["OMPI_COMM_WORLD_RANK"] = "0";
    EXPECT_EQ(rank_from_environment(env.lookup()), 0);
    // Every variable of the one list is read.
    for (const char* name : formats::kRankVariables) {
        FakeEnvironment one;
        one.values[name] = "42";
        EXPECT_EQ(rank_from_environment(one.lookup()), 42) << name;
    }
}

TEST(LauncherEnvironment, JobIdFromSlurmOrTheOthersSanitized) {
    FakeEnvironment env;
    EXPECT_EQ(job_id_from_environment(env.lookup()), "");
    env.values["PMIX_NAMESPACE"] = "prterun-n01-1234@1";
    EXPECT_EQ(job_id_from_environment(env.lookup()), "prterun-n01-1234_1");
    env.values["SLURM_JOB_ID"] = "4711";
    EXPECT_EQ(job_id_from_environment(env.lookup()), "4711");
    env.values["SLURM_STEP_ID"] = "0";
    EXPECT_EQ(job_id_from_environment(env.lookup()), "4711.0");
    for (const char* name : formats::kJobIdVariables) {
        FakeEnvironment one;
        one.values[name] = "j1";
        EXPECT_EQ(job_id_from_environment(one.lookup()), "j1") << name;
    }
}

TEST(RunLayout, DefaultDirectoryNamedAfterTheJobOrTheTime) {
    EXPECT_EQ(default_run_directory_name("4711.0", 0), "stacksage-4711.0");
    EXPECT_EQ(default_run_directory_name("4711.0", 0, 2), "stacksage-4711.0-2");
    const std::string stamped = default_run_directory_name("", 1764110096, 3);
    EXPECT_TRUE(stamped.starts_with("stacksage-2025")) << stamped;
    EXPECT_TRUE(stamped.ends_with("-3")) << stamped;
    EXPECT_EQ(stamped.size(), std::string("stacksage-YYYYmmdd-HHMMSS-3").size());
}
