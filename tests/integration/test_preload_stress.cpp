// The hardening issue's stress case: 256 traced processes of 16 threads each,
// started at once on a small machine (a fork storm, as a launcher starts the
// ranks of a node). Every process has its whole log, the node's topology is
// written exactly once (topology.xml and its snapshot, topology.snap, each
// published by one process, watched with inotify), no file is torn, and
// `stacksage report` covers every process.
#include <gtest/gtest.h>

#include <sys/inotify.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <set>

#include "parsers/node_file_reader.hpp"
#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

// Counts names created in (or moved into) one directory.
class DirectoryWatch {
public:
    explicit DirectoryWatch(const fs::path& dir) {
        fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (fd_ >= 0 && ::inotify_add_watch(fd_, dir.c_str(), IN_CREATE | IN_MOVED_TO) < 0) {
            ::close(fd_);
            fd_ = -1;
        }
    }
    ~DirectoryWatch() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool active() const { return fd_ >= 0; }
    // Reads what has queued up; call it often enough that the queue (16384
    // events by default) does not overflow.
    void drain() {
        if (fd_ < 0) return;
        alignas(inotify_event) char buf[64 * 1024];
        for (;;) {
            ssize_t n = ::read(fd_, buf, sizeof buf);
            if (n <= 0) return;
            for (char* p = buf; p < buf + n;) {
                auto* e = reinterpret_cast<inotify_event*>(p);
                if (e->mask & IN_Q_OVERFLOW) overflowed = true;
                if (e->len > 0) {
                    const std::string name = e->name;
                    if (e->mask & IN_CREATE) ++created[name];
                    if (e->mask & IN_MOVED_TO) ++moved_in[name];
                }
                p += sizeof(inotify_event) + e->len;
            }
        }
    }
    std::map<std::string, int> created;
    std::map<std::string, int> moved_in;
    bool overflowed = false;

private:
    int fd_ = -1;
};

TEST(PreloadStress, TwoHundredFiftySixProcessesOfSixteenThreadsStartedAtOnce) {
    constexpr int kProcesses = 256;
    constexpr int kThreads = 16;
    TempDir out;
    const fs::path host = out.path() / host_dir_name();
    // Made in advance only so that it can be watched; the recorder accepts an
    // existing host directory.
    fs::create_directory(host);
    DirectoryWatch watch(host);

    // The launcher itself is not traced (like mpirun in `mpirun stacksage run
    // -- ./app`): the 256 workers race for the topology.
    RunOptions o;
    o.argv = {example("fork_storm"), std::to_string(kProcesses), std::to_string(kThreads)};
    o.preload = false;
    if (const char* variable = std::getenv("ASAN_OPTIONS")) o.env["ASAN_OPTIONS"] = variable;
    if (const char* variable = std::getenv("TSAN_OPTIONS")) o.env["TSAN_OPTIONS"] = variable;
    // What run() sets for a traced program (a sanitized build's runtime and
    // options included), with LD_PRELOAD passed on for the workers only.
    add_preload_environment(o.env, out.path());
    o.env["STORM_PRELOAD"] = o.env["LD_PRELOAD"];
    o.env.erase("LD_PRELOAD");
    o.timeout = std::chrono::seconds(240);
    const auto started = std::chrono::steady_clock::now();
    RunResult r = run(o);
    const auto seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    watch.drain();
    RecordProperty("storm_seconds", std::to_string(seconds));
    std::printf("fork storm of %d x %d threads: %.1f s\n", kProcesses, kThreads, seconds);
    ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;
    EXPECT_NE(r.out.find("fork_storm: 256 workers, 256 as expected"), std::string::npos) << r.out;
    EXPECT_EQ(recorder_problems(r.err), "") << "no recording was lost:\n" << r.err;

    // Every process: its whole log, untorn.
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), static_cast<std::size_t>(kProcesses)) << describe(logs);
    std::set<int> ranks, pids;
    int topology_writers = 0;
    int models_ok = 0;
    for (const auto& log : logs) {
        SCOPED_TRACE(log.file.filename().string());
        expect_well_formed(log);
        expect_complete(log);
        const int rank = log.start().value("rank", -1);
        ranks.insert(rank);
        pids.insert(log.pid());
        EXPECT_EQ(log.file.parent_path().filename(), host_dir_name());
        EXPECT_EQ(log.start()["log"], "node.events");
        EXPECT_EQ(log.start()["origin"], "exec");
        EXPECT_EQ(log.image, 0);
        EXPECT_EQ(log.start()["identity"]["OMPI_COMM_WORLD_SIZE"], std::to_string(kProcesses));
        auto starts = log.all("thread_start");
        auto ends = log.thread_ends();
        ASSERT_EQ(starts.size(), static_cast<std::size_t>(kThreads));
        ASSERT_EQ(ends.size(), static_cast<std::size_t>(kThreads));
        std::set<int> seqs, end_seqs;
        for (const auto& s : starts) {
            seqs.insert(s["seq"].get<int>());
            EXPECT_EQ(base_name(s["creator_module"]), "fork_storm");
            EXPECT_EQ(s["creator_tid"], log.pid());
        }
        for (const auto& e : ends) {
            end_seqs.insert(e["seq"].get<int>());
            EXPECT_EQ(e["how"], "return");
        }
        EXPECT_EQ(seqs.size(), static_cast<std::size_t>(kThreads));
        EXPECT_EQ(*seqs.rbegin(), kThreads);
        EXPECT_EQ(end_seqs, seqs);
        auto end = log.first("process_end");
        ASSERT_TRUE(end);
        EXPECT_EQ((*end)["how"], "exit");
        EXPECT_EQ((*end)["status"], rank % 8);
        EXPECT_EQ((*end)["threads_created"], kThreads);
        EXPECT_EQ((*end)["threads_untraced"], 0);
        if (auto t = log.first("topology")) {
            ++topology_writers;
            EXPECT_TRUE((*t)["ok"].get<bool>()) << t->dump();
        }
        if (auto m = log.first("model")) {
            EXPECT_TRUE((*m)["ok"].get<bool>()) << m->dump();
            models_ok += (*m)["ok"].get<bool>() ? 1 : 0;
        }
        // process_end, then the model, is the end of the log.
        EXPECT_EQ(log.events.back()["ev"], "model");
    }
    EXPECT_EQ(ranks.size(), static_cast<std::size_t>(kProcesses));
    EXPECT_EQ(*ranks.begin(), 0);
    EXPECT_EQ(*ranks.rbegin(), kProcesses - 1);
    EXPECT_EQ(pids.size(), static_cast<std::size_t>(kProcesses));
    EXPECT_EQ(models_ok, kProcesses);

    // The topology: written exactly once, whole, nothing left behind.
    EXPECT_EQ(topology_writers, 1);
    std::ifstream xml_in(host / "topology.xml");
    std::string xml((std::istreambuf_iterator<char>(xml_in)), std::istreambuf_iterator<char>());
    EXPECT_NE(xml.find("<topology"), std::string::npos);
    EXPECT_NE(xml.find("</topology>"), std::string::npos);
    EXPECT_TRUE(fs::exists(host / "topology.snap"));
    if (watch.active()) {
        EXPECT_FALSE(watch.overflowed);
        EXPECT_EQ(watch.created["topology.xml"], 1) << "topology.xml published more than once";
        EXPECT_EQ(watch.moved_in["topology.snap"], 1) << "topology.snap published more than once";
        // (topology.xml.claim may come and go more than once: a process that
        // claims just after the writer released its claim finds topology.xml
        // there and gives the claim back.)
    }
    // One file for all the processes' events, one for their models.
    for (const auto& f : fs::directory_iterator(host)) {
        const std::string name = f.path().filename().string();
        EXPECT_TRUE(name == "topology.xml" || name == "topology.snap" || name == "topology.snap.lock" || name == "live.node" ||
                    name == "node.events" || name == "node.models")
            << "left behind: " << name;
    }
    auto models = stacksage::read_node_file((host / "node.models").string(), "node.models",
                                            stacksage::formats::node_file::FileKind::models);
    ASSERT_TRUE(models) << models.error().message;
    EXPECT_EQ(models->streams.size(), static_cast<std::size_t>(kProcesses));
    for (const auto& m : models->streams) {
        EXPECT_TRUE(m.ended);
        EXPECT_GT(m.of_stream, 0u);
        EXPECT_TRUE(nlohmann::json::parse(m.text, nullptr, false).is_object());
    }

    // The report covers all of them.
    RunOptions report;
    report.argv = {stacksage_binary(), "report", out.path().string(), "--format", "json"};
    report.preload = false;
    report.timeout = std::chrono::seconds(120);
    const auto report_started = std::chrono::steady_clock::now();
    RunResult rep = run(report);
    std::printf("report of %d processes: %.1f s\n", kProcesses,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - report_started).count());
    ASSERT_EQ(rep.exit_code(), 0) << rep.err;
    auto doc = nlohmann::json::parse(rep.out);
    EXPECT_EQ(doc["summary"]["processes"], kProcesses);
    EXPECT_EQ(doc["summary"]["logs"], kProcesses);
    EXPECT_EQ(doc["summary"]["logs_skipped"], 0);
    // Threads the recorder saw created; a ThreadSanitizer build's processes
    // also have the runtime's own background thread, found at the end in
    // the kernel's task list (untraced_threads).
    int untraced = 0;
    for (const auto& p : doc["nodes"][0]["processes"]) untraced += p["untraced_threads"].get<int>();
    EXPECT_EQ(doc["summary"]["threads"].get<int>() - untraced, kProcesses * (kThreads + 1));
    ASSERT_EQ(doc["nodes"].size(), 1u);
    EXPECT_EQ(doc["nodes"][0]["topology"], "hwloc");
    const auto& processes = doc["nodes"][0]["processes"];
    ASSERT_EQ(processes.size(), static_cast<std::size_t>(kProcesses));
    std::set<int> reported_ranks;
    for (const auto& p : processes) {
        reported_ranks.insert(p["rank"].get<int>());
        EXPECT_EQ(p["threads"].get<int>() - p["untraced_threads"].get<int>(), kThreads + 1) << p.dump();
        EXPECT_LE(p["untraced_threads"].get<int>(), 1) << p.dump();
        EXPECT_EQ(p["end"], "exit") << p.dump();
        EXPECT_TRUE(pids.count(p["pid"].get<int>())) << p.dump();
    }
    EXPECT_EQ(reported_ranks, ranks);
}

// The same storm with the launcher itself traced: every child has a log of
// its own from fork on (origin "fork", ending in its exec), and then its new
// image's (with its rank in the name); the launcher records all 256 forks.
// 513 logs, all whole.
TEST(PreloadStress, ATracedLauncherForkingTwoHundredFiftySixWorkers) {
    constexpr int kProcesses = 256;
    TempDir out;
    RunOptions o;
    o.argv = {example("fork_storm"), std::to_string(kProcesses), "4"};
    o.output = out.path();
    o.timeout = std::chrono::seconds(240);
    const auto started = std::chrono::steady_clock::now();
    RunResult r = run(o);
    std::printf("traced launcher, %d workers: %.1f s\n", kProcesses,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    ASSERT_EQ(r.exit_code(), 0) << r.out << r.err;
    EXPECT_EQ(recorder_problems(r.err), "") << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), static_cast<std::size_t>(2 * kProcesses + 1));
    const ProcessLog* launcher = find_log(logs, "fork_storm", 0, "exec");
    ASSERT_NE(launcher, nullptr);
    std::set<int> forked;
    for (const auto& f : launcher->all("fork")) forked.insert(f["child_pid"].get<int>());
    EXPECT_EQ(forked.size(), static_cast<std::size_t>(kProcesses));
    std::set<int> fork_logs, image_logs;
    for (const auto& log : logs) {
        SCOPED_TRACE(log.file.filename().string());
        expect_well_formed(log);
        expect_complete(log);
        if (&log == launcher) continue;
        EXPECT_TRUE(forked.count(log.pid()));
        if (log.start()["origin"] == "fork") {
            fork_logs.insert(log.pid());
            EXPECT_EQ(log.start()["ppid"], launcher->pid());
            ASSERT_TRUE(log.first("exec"));
            EXPECT_EQ(log.events.back()["ev"], "exec");
        } else {
            image_logs.insert(log.pid());
            // The new image is the pid's second stream, after its fork's.
            EXPECT_EQ(log.image, 1);
            EXPECT_EQ(log.start()["origin"], "exec");
            EXPECT_EQ(log.all("thread_start").size(), 4u);
            auto end = log.first("process_end");
            ASSERT_TRUE(end);
            EXPECT_EQ((*end)["status"], log.start()["rank"].get<int>() % 8);
        }
    }
    EXPECT_EQ(fork_logs, forked);
    EXPECT_EQ(image_logs, forked);
}

}  // namespace
}  // namespace stacksage::testing
