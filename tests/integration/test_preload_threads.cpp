// Threads under the preload: creation (pthreads, std::thread, from a
// library constructor), affinity changes, names, ends of every kind.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "tests/integration/log_checks.hpp"

namespace stacksage::testing {
namespace {

RunResult run_example(const TempDir& out, std::vector<std::string> argv,
                      std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = std::move(argv);
    o.output = out.path();
    o.env = std::move(env);
    return run(o);
}

TEST(PreloadThreads, PthreadsWithExplicitAffinity) {
    TempDir out;
    RunResult r = run_example(out, {example("pthreads_affinity")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u) << describe(logs);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    EXPECT_EQ(log.file.filename().string(), "node.events#1");

    const Cpuset allowed = own_affinity();
    const unsigned first = *allowed.first();
    unsigned last = first;
    for (unsigned c : allowed) last = c;
    EXPECT_EQ(cpuset_of(log.start()["cpuset"]), allowed);
    EXPECT_EQ(log.start()["rank"], nullptr);
    EXPECT_EQ(log.start()["launcher"], nullptr);
    EXPECT_EQ(log.start()["initialised_by"], "constructor");

    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 2u);
    const nlohmann::json* self_binding = nullptr;
    const nlohmann::json* attr_bound = nullptr;
    for (const auto& s : starts) {
        EXPECT_EQ(base_name(s["creator_module"]), "pthreads_affinity");
        EXPECT_EQ(base_name(s["start_module"]), "pthreads_affinity");
        EXPECT_EQ(s["creator_tid"], log.pid());
        if (s.contains("attr_cpuset"))
            attr_bound = &s;
        else
            self_binding = &s;
    }
    ASSERT_NE(attr_bound, nullptr);
    ASSERT_NE(self_binding, nullptr);
    Cpuset last_only;
    last_only.set(last);
    EXPECT_EQ(cpuset_of((*attr_bound)["attr_cpuset"]), last_only);
    EXPECT_EQ(cpuset_of((*attr_bound)["cpuset"]), last_only);  // the mask it really had
    EXPECT_EQ(cpuset_of((*self_binding)["cpuset"]), allowed);
    const int a_tid = (*self_binding)["tid"];

    auto affinity = log.all("affinity");
    ASSERT_EQ(affinity.size(), 2u);
    Cpuset first_only, both;
    first_only.set(first);
    both.set(first);
    both.set(last);
    // The thread bound itself...
    EXPECT_EQ(affinity[0]["api"], "sched_setaffinity");
    EXPECT_EQ(affinity[0]["tid"], a_tid);
    EXPECT_EQ(affinity[0]["target_tid"], a_tid);
    EXPECT_TRUE(affinity[0]["target_is_caller"].get<bool>());
    EXPECT_EQ(base_name(affinity[0]["caller_module"]), "pthreads_affinity");
    EXPECT_EQ(cpuset_of(affinity[0]["old_cpuset"]), allowed);
    EXPECT_EQ(cpuset_of(affinity[0]["requested_cpuset"]), first_only);
    EXPECT_EQ(cpuset_of(affinity[0]["cpuset"]), first_only);
    EXPECT_EQ(affinity[0]["rc"], 0);
    // ...then main re-bound it from outside.
    EXPECT_EQ(affinity[1]["api"], "pthread_setaffinity_np");
    EXPECT_EQ(affinity[1]["tid"], log.pid());
    EXPECT_EQ(affinity[1]["target_tid"], a_tid);
    EXPECT_FALSE(affinity[1]["target_is_caller"].get<bool>());
    EXPECT_TRUE(affinity[1]["target_in_process"].get<bool>());
    EXPECT_EQ(cpuset_of(affinity[1]["old_cpuset"]), first_only);
    EXPECT_EQ(cpuset_of(affinity[1]["cpuset"]), both);

    auto name = log.first("thread_name");
    ASSERT_TRUE(name);
    EXPECT_EQ((*name)["name"], "binds-itself");
    EXPECT_EQ((*name)["target_pthread"], (*self_binding)["pthread"]);

    auto ends = log.thread_ends();
    ASSERT_EQ(ends.size(), 2u);
    for (const auto& e : ends) {
        EXPECT_EQ(e["how"], "return");
        EXPECT_GE(e["cpu"].get<int>(), 0);
        // A thread that ended within a millisecond of its start says so and
        // has no CPU time, switches or end mask (the recorder skips those
        // reads: docs/event-log.md). The thread bound by its attributes
        // returns at once and is usually one; the one that binds itself
        // lives 3 ms and never is.
        const bool short_lived = e.value("short_lived", false);
        EXPECT_EQ(e.contains("utime_us") && e.contains("nvcsw") && e.contains("nivcsw") && e.contains("cpuset"),
                  !short_lived);
        if (e["tid"] == a_tid) {
            EXPECT_FALSE(short_lived);
            EXPECT_EQ(cpuset_of(e["cpuset"]), both);
        }
    }
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["how"], "exit");
    EXPECT_EQ((*end)["status"], 0);
    EXPECT_EQ((*end)["threads_created"], 2);
    EXPECT_EQ((*end)["threads_untraced"], 0);
}

// A new thread's starting mask is its creator's as the recorder knows it
// (no system call in the new thread); each affinity call must refresh it.
TEST(PreloadThreads, ANewThreadStartsWithItsCreatorsLatestMask) {
    TempDir out;
    RunResult r = run_example(out, {example("inherited_affinity")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u) << describe(logs);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    const Cpuset allowed = own_affinity();
    const unsigned first = *allowed.first();
    unsigned last = first;
    for (unsigned c : allowed) last = c;
    Cpuset first_only, last_only;
    first_only.set(first);
    last_only.set(last);

    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 3u);
    EXPECT_EQ(cpuset_of(starts[0]["cpuset"]), allowed);
    EXPECT_EQ(cpuset_of(starts[1]["cpuset"]), last_only);
    EXPECT_EQ(cpuset_of(starts[2]["cpuset"]), first_only);
    EXPECT_EQ(log.all("affinity").size(), 2u);
}

TEST(PreloadThreads, StdThreadIsCreatedByTheApplicationNotLibstdcxx) {
    TempDir out;
    RunResult r = run_example(out, {example("std_threads")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    auto starts = logs[0].all("thread_start");
    ASSERT_EQ(starts.size(), 3u);
    for (const auto& s : starts) {
        EXPECT_EQ(base_name(s["creator_module"]), "std_threads") << s.dump();
        EXPECT_NE(base_name(s["start_module"]).find("libstdc++"), std::string::npos) << s.dump();
    }
    EXPECT_EQ(logs[0].thread_ends().size(), 3u);
}

TEST(PreloadThreads, AThousandShortLivedThreads) {
    TempDir out;
    RunResult r = run_example(out, {example("many_threads"), "1000"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    auto starts = logs[0].all("thread_start");
    auto ends = logs[0].thread_ends();
    EXPECT_EQ(starts.size(), 1000u);
    EXPECT_EQ(ends.size(), 1000u);
    std::set<int> seqs;
    for (const auto& s : starts) seqs.insert(s["seq"].get<int>());
    EXPECT_EQ(seqs.size(), 1000u);
    EXPECT_EQ(*seqs.begin(), 1);
    EXPECT_EQ(*seqs.rbegin(), 1000);
    // A thread that ended within 1 ms is one line, its thread_start with its
    // end; one that lived longer has a thread_end of its own; none has both.
    std::set<int> one_line, own_end;
    for (const auto& s : starts)
        if (s.contains("end_t")) {
            one_line.insert(s["seq"].get<int>());
            EXPECT_LT(s["end_t"].get<std::int64_t>() - s["t"].get<std::int64_t>(), 1'000'000) << s.dump();
            EXPECT_EQ(s["end_t"].get<std::int64_t>() - s["t"].get<std::int64_t>(), s["duration_ns"]) << s.dump();
        }
    for (const auto& e : logs[0].all("thread_end")) {
        own_end.insert(e["seq"].get<int>());
        EXPECT_FALSE(one_line.count(e["seq"].get<int>())) << "a one-line thread with a thread_end too: " << e.dump();
    }
    EXPECT_EQ(one_line.size() + own_end.size(), 1000u);
    EXPECT_GT(one_line.size(), 0u) << "threads of a few microseconds should end within 1 ms";
    auto end = logs[0].first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["threads_created"], 1000);
    EXPECT_EQ((*end)["threads_untraced"], 0);
    // Threads this short are spared the read of their wait for a CPU (it
    // would cost more than their whole life); the main thread's is read.
    for (const auto& e : ends) EXPECT_FALSE(e.contains("run_delay_ns")) << e.dump();
    if (std::filesystem::exists("/proc/thread-self/schedstat")) {
        EXPECT_TRUE(end->contains("main_run_delay_ns"));
    }
}

// Six busy threads on one CPU: each runs a sixth of the time and waits for
// the CPU the rest; the recorder writes that wait at each thread's end.
TEST(PreloadThreads, StarvedThreadsRecordTheirWaitForACpu) {
    if (!std::filesystem::exists("/proc/thread-self/schedstat")) GTEST_SKIP() << "the kernel has no schedstat";
    const Cpuset allowed = own_affinity();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(*allowed.first(), &one);
    cpu_set_t before;
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // the child inherits it
    TempDir out;
    RunResult r = run_example(out, {example("busy_threads"), "6", "0.4"});
    sched_setaffinity(0, sizeof before, &before);
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    auto ends = logs[0].thread_ends();
    ASSERT_EQ(ends.size(), 6u);
    for (const auto& e : ends) {
        ASSERT_TRUE(e.contains("run_delay_ns")) << e.dump();
        // About 5/6 of its life; at least half, whatever the scheduler's order.
        EXPECT_GE(e["run_delay_ns"].get<std::int64_t>(), e["duration_ns"].get<std::int64_t>() / 2) << e.dump();
    }
}

// Ten threads at a time writing 12,000 lines: the log crosses many chunks of
// its mapping, and every line is whole, once, and the file ends where the
// last line does.
TEST(PreloadThreads, ConcurrentThreadsAcrossManyLogChunksWriteOnlyWholeLines) {
    TempDir out;
    RunResult r = run_example(out, {example("many_threads"), "6000"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    expect_complete(logs[0]);
    EXPECT_GT(fs::file_size(logs[0].file.parent_path() / "node.events"), 4u * 256 * 1024)
        << "expected a stream of several regions";
    auto starts = logs[0].all("thread_start");
    auto ends = logs[0].thread_ends();
    EXPECT_EQ(starts.size(), 6000u);
    EXPECT_EQ(ends.size(), 6000u);
    std::set<int> seqs;
    for (const auto& s : starts) seqs.insert(s["seq"].get<int>());
    for (const auto& e : ends) seqs.insert(-e["seq"].get<int>());
    EXPECT_EQ(seqs.size(), 12000u);
    EXPECT_TRUE(logs[0].first("process_end"));
}

// A daemon closes every descriptor, the log's among them. The mapping
// survives that, and growing the log finds the file again by its name.
TEST(PreloadThreads, ADaemonClosingEveryDescriptorIsStillTraced) {
    TempDir out;
    RunResult r = run_example(out, {example("many_threads"), "3000", "close-fds"});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_EQ(recorder_problems(r.err), "") << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    expect_complete(logs[0]);
    EXPECT_EQ(logs[0].all("thread_start").size(), 3000u);
    EXPECT_EQ(logs[0].thread_ends().size(), 3000u);
    EXPECT_TRUE(logs[0].first("process_end"));
}

// A full disk: a 400 KiB tmpfs (root only; skipped elsewhere). One message,
// the application runs on, and the log keeps every line up to the first one
// that did not fit, ending where that line would have started (no NULs).
TEST(PreloadThreads, AFullDiskGivesOneMessageAndAWholeLog) {
    TempDir out;
    if (::geteuid() != 0 || ::mount("tmpfs", out.path().c_str(), "tmpfs", 0, "size=400k") != 0)
        GTEST_SKIP() << "needs root to mount a small tmpfs";
    struct Unmount {
        const fs::path& dir;
        ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
    } unmount{out.path()};
    RunResult r = run_example(out, {example("many_threads"), "3000"}, {{"STACKSAGE_MODEL", "0"}});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("many_threads: 3000 threads"), std::string::npos);
    const auto first = r.err.find("stacksage: ");
    ASSERT_NE(first, std::string::npos) << r.err;
    EXPECT_NE(r.err.find("No space left on device"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("stacksage: ", first + 1), std::string::npos) << "one message only:\n" << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    expect_complete(logs[0]);
    EXPECT_GT(logs[0].all("thread_start").size(), 100u);
    EXPECT_LT(logs[0].all("thread_start").size(), 3000u);
}

TEST(PreloadThreads, PthreadExitCancellationAndMainThreadExit) {
    TempDir out;
    RunResult r = run_example(out, {example("thread_exit")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    std::map<int, std::string> how_by_seq;
    std::string main_how;
    for (const auto& e : log.thread_ends()) {
        if (e["tid"] == log.pid())
            main_how = e["how"];
        else
            how_by_seq[e["seq"].get<int>()] = e["how"];
    }
    EXPECT_EQ(how_by_seq[1], "pthread_exit");
    EXPECT_EQ(how_by_seq[2], "cancel");
    EXPECT_EQ(how_by_seq[3], "return");
    EXPECT_EQ(main_how, "pthread_exit");
    // The last thread ends the process through exit(0).
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 0);
}

TEST(PreloadThreads, ThreadFromALibraryConstructorIsRecorded) {
    TempDir out;
    RunResult r = run_example(out, {example("early_thread")});
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    expect_well_formed(logs[0]);
    // glibc runs the constructors of the program's own libraries before the
    // preloaded one's: the recorder was started by that pthread_create.
    EXPECT_EQ(logs[0].start()["initialised_by"], "first_call");
    auto starts = logs[0].all("thread_start");
    ASSERT_EQ(starts.size(), 1u);
    EXPECT_EQ(base_name(starts[0]["creator_module"]), "libearly_thread_lib.so");
    EXPECT_EQ(logs[0].thread_ends().size(), 1u);
}

}  // namespace
}  // namespace stacksage::testing
