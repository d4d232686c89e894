// Processes under the preload: fork and exec, crashes and SIGKILL (what was
// recorded stays), the inherited mask, what is (not) taken from the
// environment, and an unusable output directory (untraced, one message).
#include "core/snapshot.hpp"
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <set>

#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

TEST(PreloadProcess, ForkGivesTheChildItsOwnLogAndExecTracesTheNewImage) {
    TempDir out;
    RunOptions o;
    o.argv = {example("fork_exec")};
    o.output = out.path();
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 3u) << describe(logs);
    for (const auto& l : logs) expect_well_formed(l);
    // The child inherits the parent's stream's mapping: it must write only
    // its own stream, and each must be whole (its length recorded at exit or
    // exec). All three are streams of the node's one file.
    for (const auto& l : logs) expect_complete(l);
    for (const auto& l : logs) EXPECT_EQ(l.file.parent_path(), logs.front().file.parent_path());
    for (const auto& l : logs) EXPECT_TRUE(l.stream_ended) << l.file;

    const ProcessLog* parent = find_log(logs, "fork_exec", 0, "exec");
    const ProcessLog* forked = find_log(logs, "fork_exec", 0, "fork");
    const ProcessLog* image = find_log(logs, "fork_exec", 1, "exec");
    ASSERT_TRUE(parent && forked && image) << describe(logs);
    auto fork = parent->first("fork");
    ASSERT_TRUE(fork);
    const int child = (*fork)["child_pid"];
    EXPECT_EQ(forked->pid(), child);
    EXPECT_EQ(forked->start()["ppid"], parent->pid());
    EXPECT_EQ(forked->start()["log"], "node.events");
    EXPECT_GT(forked->start()["stream"].get<int>(), parent->start()["stream"].get<int>());
    auto exec = forked->first("exec");
    ASSERT_TRUE(exec);
    EXPECT_EQ((*exec)["argv"][1], "child");
    EXPECT_FALSE(forked->first("process_end")) << "exec replaces the image; it does not end the process";

    EXPECT_EQ(image->pid(), child);
    EXPECT_GT(image->start()["stream"].get<int>(), forked->start()["stream"].get<int>());
    EXPECT_EQ(image->start()["cmdline"][1], "child");
    EXPECT_EQ(image->all("thread_start").size(), 1u);
    auto end = image->first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 7);
}

TEST(PreloadProcess, SegfaultIsRecordedThenKillsAsBefore) {
    TempDir out;
    RunOptions o;
    o.argv = {example("crash"), "segv"};
    o.output = out.path();
    RunResult r = run(o);
    EXPECT_EQ(r.term_signal(), SIGSEGV) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    EXPECT_EQ(logs[0].all("thread_start").size(), 1u);
    auto sig = logs[0].first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["signal"], SIGSEGV);
    EXPECT_EQ((*sig)["name"], "SIGSEGV");
    EXPECT_EQ((*sig)["disposition"], "default");
    EXPECT_TRUE((*sig)["fatal"].get<bool>());
    EXPECT_EQ((*sig)["addr"], "0x0");
    // Then what process_end would have said, before the default action.
    const auto& end = logs[0].events.back();
    ASSERT_EQ(end["ev"], "process_end") << end.dump();
    EXPECT_EQ(end["how"], "signal");
    EXPECT_EQ(end["signal"], SIGSEGV);
    EXPECT_TRUE(end.contains("main_cpu_us")) << end.dump();
}

TEST(PreloadProcess, ApplicationSignalHandlerStillRuns) {
    TempDir out;
    RunOptions o;
    o.argv = {example("crash"), "segv-handled"};
    o.output = out.path();
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 42) << r.err;
    EXPECT_NE(r.err.find("crash: handled SIGSEGV"), std::string::npos);
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    auto sig = logs[0].first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["disposition"], "handler");
    EXPECT_FALSE((*sig)["fatal"].get<bool>());
    auto end = logs[0].first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["how"], "_exit");
    EXPECT_EQ((*end)["status"], 42);
}

TEST(PreloadProcess, SigkillLosesNothingAlreadyRecorded) {
    TempDir out;
    RunOptions o;
    o.argv = {example("crash"), "kill"};
    o.output = out.path();
    RunResult r = run(o);
    EXPECT_EQ(r.term_signal(), SIGKILL);
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    EXPECT_FALSE(logs[0].torn_last_line);
    // The thread sleeps and the main thread writes nothing after creating
    // it: its start line is the start-line writer's, once it was 1 ms old.
    EXPECT_EQ(logs[0].all("thread_start").size(), 1u);
    EXPECT_FALSE(logs[0].first("process_end"));
}

// SIGKILL while four threads are creating threads: lines are being copied
// into the log at that moment. Everything before is there and whole; at most
// the lines in flight are torn (NUL bytes where their missing bytes would be).
TEST(PreloadProcess, SigkillWhileThreadsWriteKeepsEveryEarlierLine) {
    TempDir out;
    RunOptions o;
    o.argv = {example("crash"), "kill-busy"};
    o.output = out.path();
    RunResult r = run(o);
    EXPECT_EQ(r.term_signal(), SIGKILL);
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    EXPECT_GT(log.nul_bytes, 0u) << "a killed process's log ends in the unused, zero-filled mapping";
    EXPECT_LE(log.torn_lines, 16u);
    EXPECT_FALSE(log.first("process_end"));
    auto starts = log.all("thread_start");
    ASSERT_GT(starts.size(), 20u);
    std::set<int> seqs;
    std::set<int> started_tids;
    for (const auto& s : starts) {
        seqs.insert(s["seq"].get<int>());
        started_tids.insert(s["tid"].get<int>());
    }
    // Seqs are handed out in creation order and a thread's start line is
    // written at its end or once it is 1 ms old: only threads younger than
    // that, or lines in flight, may be missing.
    const int newest = *seqs.rbegin();
    EXPECT_GE(static_cast<int>(seqs.size()), newest - 12) << "newest seq " << newest;
    for (const auto& e : log.thread_ends())
        EXPECT_TRUE(started_tids.count(e["tid"].get<int>())) << e.dump();
}

TEST(PreloadProcess, InheritedMaskOfARestrictedRun) {
    const Cpuset allowed = own_affinity();
    Cpuset one;
    one.set(*allowed.first());
    TempDir out;
    RunOptions o;
    o.argv = {example("pthreads_affinity")};
    o.output = out.path();
    o.affinity = one;  // as `taskset -c N` would
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    EXPECT_EQ(cpuset_of(logs[0].start()["cpuset"]), one);
    for (const auto& s : logs[0].all("thread_start")) EXPECT_EQ(cpuset_of(s["cpuset"]), one);
    EXPECT_TRUE(logs[0].start()["cgroup_cpuset"].is_string() || logs[0].start()["cgroup_cpuset"].is_null());
}

TEST(PreloadProcess, OnlyAllowlistedEnvironmentIsRecorded) {
    TempDir out;
    RunOptions o;
    o.argv = {example("many_threads"), "1"};
    o.output = out.path();
    o.env = {
        {"OMP_NUM_THREADS", "3"},
        {"KMP_BLOCKTIME", "0"},
        {"GOMP_SPINCOUNT", "1000"},
        {"OMPI_MCA_hwloc_base_binding_policy", "core"},
        {"OMPI_MCA_btl", "self"},
        {"MV2_ENABLE_AFFINITY", "1"},
        {"SLURM_CPU_BIND", "cores"},
        {"SLURM_CPUS_PER_TASK", "4"},
        {"SLURM_JOB_ID", "4242"},
        {"SECRET_TOKEN", "hunter2-do-not-record"},
        {"AWS_SECRET_ACCESS_KEY", "hunter2-do-not-record"},
    };
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const auto& env = logs[0].start()["env"];
    EXPECT_EQ(env["OMP_NUM_THREADS"], "3");
    EXPECT_EQ(env["KMP_BLOCKTIME"], "0");
    EXPECT_EQ(env["GOMP_SPINCOUNT"], "1000");
    EXPECT_EQ(env["OMPI_MCA_hwloc_base_binding_policy"], "core");
    EXPECT_EQ(env["MV2_ENABLE_AFFINITY"], "1");
    EXPECT_EQ(env["SLURM_CPU_BIND"], "cores");
    EXPECT_EQ(env["SLURM_CPUS_PER_TASK"], "4");
    EXPECT_FALSE(env.contains("OMPI_MCA_btl"));
    EXPECT_EQ(logs[0].start()["identity"]["SLURM_JOB_ID"], "4242");
    std::ifstream in(logs[0].file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.find("hunter2"), std::string::npos);
}

TEST(PreloadProcess, MissingOutputDirectoryRunsUntracedWithOneMessage) {
    TempDir scratch;
    RunOptions o;
    o.argv = {example("many_threads"), "5"};
    o.output = scratch.path() / "does-not-exist";
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 0);
    EXPECT_NE(r.out.find("many_threads: 5 threads"), std::string::npos);
    EXPECT_NE(r.err.find("stacksage:"), std::string::npos);
    EXPECT_NE(r.err.find("does-not-exist"), std::string::npos);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(scratch.path() / "does-not-exist"));
}

TEST(PreloadProcess, UnwritableOutputDirectoryRunsUntraced) {
    // /proc/self is a directory nobody, not even root, can create entries in.
    RunOptions o;
    o.argv = {example("many_threads"), "5"};
    o.output = fs::path("/proc/self");
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 0);
    EXPECT_NE(r.out.find("many_threads: 5 threads"), std::string::npos);
    EXPECT_NE(r.err.find("runs untraced"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(PreloadProcess, WithoutStacksageOutputTheProgramRunsUntraced) {
    RunOptions o;
    o.argv = {example("many_threads"), "5"};
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 0);
    EXPECT_NE(r.err.find("STACKSAGE_OUTPUT is not set"), std::string::npos) << r.err;
}

TEST(PreloadProcess, PlantedSymlinksAreNeverFollowed) {
    TempDir out, elsewhere;
    // A symlink where the host directory should be...
    fs::create_directory_symlink(elsewhere.path(), out.path() / host_dir_name());
    RunOptions o;
    o.argv = {example("many_threads"), "2"};
    o.output = out.path();
    RunResult r = run(o);
    EXPECT_EQ(r.exit_code(), 0);
    EXPECT_NE(r.err.find("runs untraced"), std::string::npos) << r.err;
    EXPECT_TRUE(fs::is_empty(elsewhere.path()));

    // ...and where the topology goes: it is neither followed nor replaced.
    TempDir out2;
    fs::create_directory(out2.path() / host_dir_name());
    fs::path victim = elsewhere.path() / "victim";
    std::ofstream(victim) << "untouched";
    fs::create_symlink(victim, out2.path() / host_dir_name() / "topology.xml");
    o.output = out2.path();
    r = run(o);
    EXPECT_EQ(r.exit_code(), 0) << r.err;
    std::ifstream in(victim);
    std::string content;
    in >> content;
    EXPECT_EQ(content, "untouched");
    EXPECT_TRUE(fs::is_symlink(out2.path() / host_dir_name() / "topology.xml"));
    EXPECT_EQ(read_logs(out2.path()).size(), 1u);
}

TEST(PreloadProcess, TopologyIsWrittenOnceAndComplete) {
    TempDir out;
    RunOptions o;
    o.argv = {example("fork_exec")};
    o.output = out.path();
    RunResult r = run(o);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    fs::path host = out.path() / host_dir_name();
    ASSERT_TRUE(fs::exists(host / "topology.xml"));
    std::ifstream in(host / "topology.xml");
    std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(xml.find("<topology"), std::string::npos);
    EXPECT_NE(xml.find("</topology>"), std::string::npos);
    // Exactly one process wrote it; no temporary or claim file is left.
    int writers = 0;
    for (const auto& l : read_logs(out.path()))
        if (auto t = l.first("topology")) {
            ++writers;
            EXPECT_TRUE((*t)["ok"].get<bool>()) << t->dump();
        }
    EXPECT_EQ(writers, 1);
    for (const auto& f : fs::directory_iterator(host)) {
        std::string name = f.path().filename().string();
        // topology.snap: the snapshot the first model writer published for
        // the others (and the analyzer); .lock: its lock, kept by design.
        // One file per node for the events and one for the models, whatever
        // the number of processes.
        EXPECT_TRUE(name == "topology.xml" || name == "topology.snap" || name == "topology.snap.lock" || name == "live.node" ||
                    name == "node.events" || name == "node.models")
            << name;
    }
    // Processes that wrote a model published the node's snapshot, whole.
    if (fs::exists(host / "topology.snap")) {
        auto snapshot = stacksage::open_snapshot((host / "topology.snap").string());
        ASSERT_TRUE(snapshot) << snapshot.error().message;
        EXPECT_GT(snapshot->count_of_type(stacksage::ComponentType::Thread), 0u);
    }
}

}  // namespace
}  // namespace stacksage::testing
