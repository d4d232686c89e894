// `stacksage run`: finds the recorder, prepends it to LD_PRELOAD, records
// run.json, returns the command's status and forwards signals.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "cli/sanitizer_runtime.hpp"
#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

RunResult stacksage_run(const TempDir& out, std::vector<std::string> command,
                        std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "-o", out.path().string(), "--"};
    for (auto& c : command) o.argv.push_back(c);
    o.preload = false;
    o.env = std::move(env);
    return run(o);
}

TEST(StacksageRun, RecordsTheCommandAndSaysWhere) {
    TempDir out;
    RunResult r = stacksage_run(out, {example("pthreads_affinity")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("pthreads_affinity: cpus"), std::string::npos);
    EXPECT_NE(r.err.find(out.path().string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stacksage: 1 process recorded in 1 log from 1 host; in " + out.path().string()),
              std::string::npos)
        << r.err;
    std::ifstream in(out.path() / "run.json");
    auto run_json = nlohmann::json::parse(in);
    EXPECT_EQ(run_json["schema"], "stacksage-run");
    EXPECT_EQ(run_json["command"][0], example("pthreads_affinity"));
    EXPECT_EQ(run_json["options"]["output"], out.path().string());
    EXPECT_TRUE(run_json["start"]["realtime_ns"].is_number());
    EXPECT_EQ(fs::path(run_json["preload"].get<std::string>()).filename(), "libstacksage-preload.so");
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    EXPECT_EQ(logs[0].all("thread_start").size(), 2u);
}

// A shell that execs the program leaves two logs of one process: the
// closing line counts one process and says what the other log is.
TEST(StacksageRun, CountsAnImageBeforeExecAsNoProcessOfItsOwn) {
    TempDir out;
    RunResult r = stacksage_run(out, {"/bin/sh", "-c", "exec " + example("pthreads_affinity")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.err.find("stacksage: 1 process recorded in 2 logs from 1 host; 1 log is an image of a process before "
                         "it exec'ed ("),
              std::string::npos)
        << r.err;
}

TEST(StacksageRun, ReturnsTheCommandsExitStatus) {
    TempDir out;
    EXPECT_EQ(stacksage_run(out, {"/bin/sh", "-c", "exit 3"}).exit_code(), 3);
    TempDir out2;
    RunResult r = stacksage_run(out2, {example("crash"), "segv"});
    EXPECT_EQ(r.term_signal(), SIGSEGV) << "wait status " << r.wait_status;
    EXPECT_NE(r.err.find("killed by signal 11"), std::string::npos) << r.err;
    TempDir out3;
    EXPECT_EQ(stacksage_run(out3, {"/nonexistent/program"}).exit_code(), 127);
}

TEST(StacksageRun, PrependsToAnExistingLdPreload) {
    TempDir out;
    RunResult r = stacksage_run(out, {"/bin/sh", "-c", "echo \"$LD_PRELOAD|$STACKSAGE_OUTPUT\""},
                                {{"LD_PRELOAD", "libc.so.6"}});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    std::string line = r.out.substr(0, r.out.find('\n'));
    // A sanitized build puts its runtime second (cli/sanitizer_runtime.hpp).
    const std::string runtime = cli::sanitizer_runtime_library();
    if (!runtime.empty()) {
        const auto at = line.find(":" + runtime);
        ASSERT_NE(at, std::string::npos) << line;
        line.erase(at, runtime.size() + 1);
    }
    auto bar = line.find('|');
    EXPECT_EQ(fs::path(line.substr(0, line.find(':'))).filename(), "libstacksage-preload.so") << line;
    EXPECT_EQ(line.substr(line.find(':') + 1, bar - line.find(':') - 1), "libc.so.6") << line;
    EXPECT_EQ(line.substr(bar + 1), out.path().string());
}

TEST(StacksageRun, ForwardsTerminationToTheCommand) {
    TempDir out;
    std::vector<std::string> args = {stacksage_binary(), "run", "-o", out.path().string(), "--",
                                     "/bin/sleep", "30"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        setenv("STACKSAGE_PRELOAD", preload_library().c_str(), 1);
        execv(argv[0], argv.data());
        _exit(127);
    }
    // Wait until the command runs (its log exists), then ask `stacksage run`
    // to stop, as a batch system would.
    for (int i = 0; i < 200 && read_logs(out.path()).empty(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool started = read_logs(out.path()).size() == 1;
    auto start = std::chrono::steady_clock::now();
    kill(pid, SIGTERM);
    int status = 0;
    waitpid(pid, &status, 0);
    auto elapsed = std::chrono::steady_clock::now() - start;
    ASSERT_TRUE(started) << "the command did not start within 10 s";
    // The command's end is stacksage's: killed by the same signal.
    ASSERT_TRUE(WIFSIGNALED(status)) << "wait status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    EXPECT_LT(elapsed, std::chrono::seconds(10));
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    auto sig = logs[0].first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGTERM");
}

// A command killed by a signal: stacksage dies of the same signal, so that
// the shell or batch system sees what the command did (not 128 + N).
TEST(StacksageRun, DiesOfTheSignalThatKilledTheCommand) {
    for (const auto& [signal_name, number] : {std::pair<const char*, int>{"TERM", SIGTERM}, {"ABRT", SIGABRT},
                                              {"KILL", SIGKILL}, {"USR1", SIGUSR1}}) {
        TempDir out;
        RunResult r = stacksage_run(out, {"/bin/sh", "-c", std::string("kill -") + signal_name + " $$"});
        EXPECT_EQ(r.term_signal(), number) << signal_name << ": wait status " << r.wait_status << "\n" << r.err;
        EXPECT_FALSE(WCOREDUMP(r.wait_status)) << signal_name;  // the command dumped no core: neither does stacksage
    }
}

// The core-dump flag follows the command's, where stacksage's own core
// cannot replace the command's (core_pattern "core" in one directory would).
TEST(StacksageRun, DumpsCoreOnlyWhenTheCommandDid) {
    std::ifstream pattern_file("/proc/sys/kernel/core_pattern");
    std::string pattern;
    std::getline(pattern_file, pattern);
    std::ifstream uses_pid_file("/proc/sys/kernel/core_uses_pid");
    int uses_pid = 0;
    uses_pid_file >> uses_pid;
    const bool own_core_is_separate = (!pattern.empty() && pattern[0] == '|') || pattern.find("%p") != std::string::npos ||
                                      pattern.find("%P") != std::string::npos || uses_pid == 1;
    TempDir out, cwd;
    RunOptions o;
    o.argv = {"/bin/sh", "-c",
              "cd '" + cwd.path().string() + "' && ulimit -c unlimited 2>/dev/null; exec '" + stacksage_binary() +
                  "' run -q -o '" + out.path().string() + "' -- " + example("crash") + " segv"};
    o.preload = false;
    RunResult r = run(o);
    ASSERT_EQ(r.term_signal(), SIGSEGV) << r.err;
    std::size_t cores = 0;
    for (const auto& e : fs::directory_iterator(cwd.path())) cores += e.path().filename().string().rfind("core", 0) == 0;
    const bool command_dumped = cores > 0 || (own_core_is_separate && WCOREDUMP(r.wait_status));
    if (!command_dumped) {
        EXPECT_FALSE(WCOREDUMP(r.wait_status));
    } else if (own_core_is_separate) {
        EXPECT_TRUE(WCOREDUMP(r.wait_status)) << "core_pattern " << pattern;
    } else {
        // One "core" file: the command's, not replaced by stacksage's.
        EXPECT_FALSE(WCOREDUMP(r.wait_status)) << "core_pattern " << pattern;
        EXPECT_EQ(cores, 1u);
    }
}

// stacksage's own messages cannot be written: the command's status still is
// stacksage's, and nothing aborts.
TEST(StacksageRun, KeepsTheCommandsStatusWhenItsStderrIsFullOrClosed) {
    for (const char* redirection : {"2>/dev/full", "2>&-"}) {
        for (const auto& [command, expected] : {std::pair<std::string, int>{"exit 3", 3}, {"exit 0", 0}}) {
            TempDir out;
            RunOptions o;
            o.argv = {"/bin/sh", "-c",
                      "'" + stacksage_binary() + "' run --sample=auto -o '" + out.path().string() + "' -- /bin/sh -c '" +
                          command + "' " + redirection + "; echo \"status $?\""};
            o.preload = false;
            RunResult r = run(o);
            EXPECT_EQ(r.out, "status " + std::to_string(expected) + "\n") << redirection << " " << command << r.err;
        }
        // A missing command: 127, as a shell says.
        TempDir out;
        RunOptions o;
        o.argv = {"/bin/sh", "-c",
                  "'" + stacksage_binary() + "' run -o '" + out.path().string() + "' -- /nonexistent/program " +
                      redirection + "; echo \"status $?\""};
        o.preload = false;
        EXPECT_EQ(run(o).out, "status 127\n") << redirection;
    }
}

// A directory that holds a run already is refused: the command does not
// run, and the message names the directory and what to do.
TEST(StacksageRun, RefusesADirectoryThatHoldsARun) {
    TempDir out;
    ASSERT_EQ(stacksage_run(out, {"/bin/true"}).exit_code(), 0);
    const std::string first = [&] { std::ifstream in(out.path() / "run.json"); return std::string(std::istreambuf_iterator<char>(in), {}); }();
    const fs::path marker = out.path() / "second-ran";
    RunResult r = stacksage_run(out, {"/bin/sh", "-c", "touch '" + marker.string() + "'"});
    EXPECT_EQ(r.exit_code(), 2) << r.err;
    EXPECT_FALSE(fs::exists(marker));
    EXPECT_NE(r.err.find(out.path().string() + " already holds a run"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("choose another --output"), std::string::npos) << r.err;
    const std::string after = [&] { std::ifstream in(out.path() / "run.json"); return std::string(std::istreambuf_iterator<char>(in), {}); }();
    EXPECT_EQ(after, first);
}

// Started at once into one directory: one run gets it, the others are
// refused; the ranks of one job (a launcher's job id and rank) share it.
TEST(StacksageRun, ConcurrentRunsClaimTheDirectoryOnce) {
    for (bool one_job : {false, true}) {
        TempDir out;
        constexpr int kRuns = 8;
        std::vector<pid_t> pids;
        for (int i = 0; i < kRuns; ++i) {
            pid_t pid = fork();
            ASSERT_GE(pid, 0);
            if (pid == 0) {
                int null = open("/dev/null", O_WRONLY);
                dup2(null, 1);
                dup2(null, 2);
                setenv("STACKSAGE_PRELOAD", preload_library().c_str(), 1);
                for (const char* v : {"SLURM_JOB_ID", "SLURM_STEP_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE",
                                      "FLUX_JOB_ID", "PBS_JOBID", "LSB_JOBID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
                                      "PMI_RANK", "FLUX_TASK_RANK", "SLURM_PROCID"})
                    unsetenv(v);
                if (one_job) {
                    setenv("OMPI_MCA_ess_base_jobid", "4242", 1);
                    setenv("OMPI_COMM_WORLD_RANK", std::to_string(i).c_str(), 1);
                }
                execl(stacksage_binary().c_str(), "stacksage", "run", "-o", out.path().c_str(), "--", "/bin/true",
                      static_cast<char*>(nullptr));
                _exit(127);
            }
            pids.push_back(pid);
        }
        int succeeded = 0, refused = 0;
        for (pid_t pid : pids) {
            int status = 0;
            waitpid(pid, &status, 0);
            ASSERT_TRUE(WIFEXITED(status));
            succeeded += WEXITSTATUS(status) == 0;
            refused += WEXITSTATUS(status) == 2;
        }
        EXPECT_EQ(succeeded, one_job ? kRuns : 1) << "one job: " << one_job;
        EXPECT_EQ(refused, one_job ? 0 : kRuns - 1) << "one job: " << one_job;
        std::ifstream in(out.path() / "run.json");
        EXPECT_TRUE(nlohmann::json::accept(in)) << "run.json is whole";
        for (const auto& e : fs::directory_iterator(out.path()))
            EXPECT_EQ(e.path().filename().string().find(".run.json"), std::string::npos) << "left behind: " << e.path();
    }
}

// Without -o, a second run picks a fresh directory instead of being refused.
TEST(StacksageRun, TheDefaultDirectoryIsFreshForEachRun) {
    for (const std::string& job : {std::string(), std::string("SLURM_JOB_ID=777 ")}) {
        TempDir cwd;
        for (int i = 0; i < 3; ++i) {
            RunOptions o;
            o.argv = {"/bin/sh", "-c", "cd '" + cwd.path().string() + "' && " + job + "exec '" + stacksage_binary() +
                                           "' run -- /bin/true"};
            o.preload = false;
            o.unset_env = {"SLURM_JOB_ID", "SLURM_STEP_ID", "OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "FLUX_JOB_ID",
                           "PBS_JOBID", "LSB_JOBID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                           "FLUX_TASK_RANK", "SLURM_PROCID"};
            o.env["STACKSAGE_PRELOAD"] = preload_library();
            RunResult r = run(o);
            ASSERT_EQ(r.exit_code(), 0) << job << r.err;
        }
        std::set<std::string> dirs;
        for (const auto& e : fs::directory_iterator(cwd.path())) {
            EXPECT_TRUE(fs::exists(e.path() / "run.json")) << e.path();
            dirs.insert(e.path().filename().string());
        }
        EXPECT_EQ(dirs.size(), 3u) << job;
        if (!job.empty()) {
            EXPECT_TRUE(dirs.count("stacksage-777"));
            EXPECT_TRUE(dirs.count("stacksage-777-2"));
            EXPECT_TRUE(dirs.count("stacksage-777-3"));
        }
    }
}

TEST(StacksageRun, MissingCommandIsAUsageError) {
    RunOptions o;
    o.argv = {stacksage_binary(), "run"};
    o.preload = false;
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 2);
}

}  // namespace
}  // namespace stacksage::testing
