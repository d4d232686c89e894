// `stacksage run`: finds the recorder, prepends it to LD_PRELOAD, records
// run.json, returns the command's status and forwards signals.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
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
    EXPECT_EQ(logs[0].thread_starts().size(), 2u);
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
    EXPECT_EQ(r.exit_code(), 128 + SIGSEGV);
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
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
    EXPECT_LT(elapsed, std::chrono::seconds(10));
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    auto sig = logs[0].first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGTERM");
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
