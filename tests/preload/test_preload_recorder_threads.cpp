// The recorder's own threads (preload/recorder_threads.hpp) and the thread
// snapshot that must leave them out (preload/thread_snapshot.hpp).
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "preload/json_line.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/thread_snapshot.hpp"

using namespace stacksage::preload;

namespace {

int own_tid() { return static_cast<int>(syscall(SYS_gettid)); }

std::string comm_of(int tid) {
    std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

// The tids and names of a snapshot line, as the MPI events carry it.
std::map<int, std::string> snapshot() {
    static char buf[64 * 1024];
    JsonLine line(buf, sizeof buf);
    line.open_object();
    add_thread_snapshot(line);
    const std::size_t n = line.finish();
    EXPECT_GT(n, 0u);
    const auto doc = nlohmann::json::parse(std::string(buf, n));
    std::map<int, std::string> out;
    for (const auto& t : doc["threads"]) out[t["tid"].get<int>()] = t.value("name", "");
    return out;
}

// A thread that stays alive until told: a recorder thread when `recorder`.
class HelperThread {
public:
    explicit HelperThread(bool recorder) {
        if (recorder) recorder_thread_starting();
        thread_ = std::thread([this, recorder] {
            if (recorder) register_this_recorder_thread("stacksage-test");
            tid_ = own_tid();
            while (!stop_.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            if (recorder) unregister_this_recorder_thread();
        });
        while (tid_.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~HelperThread() {
        stop_ = true;
        thread_.join();
    }
    int tid() const { return tid_; }

private:
    std::atomic<int> tid_{0};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

}  // namespace

// The drain thread's case: named and registered from inside, skipped by the
// snapshot, while the application's threads stay listed.
TEST(RecorderThreads, TheSnapshotLeavesOutTheRecordersOwnThreads) {
    HelperThread application(false);
    HelperThread recorder(true);
    EXPECT_TRUE(is_recorder_thread(recorder.tid()));
    EXPECT_FALSE(is_recorder_thread(application.tid()));
    EXPECT_FALSE(is_recorder_thread(own_tid()));
    EXPECT_EQ(comm_of(recorder.tid()), "stacksage-test");
    const auto threads = snapshot();
    EXPECT_EQ(threads.count(recorder.tid()), 0u);
    EXPECT_EQ(threads.count(application.tid()), 1u);
    EXPECT_EQ(threads.count(own_tid()), 1u);
    for (const auto& [tid, name] : threads) EXPECT_NE(name.rfind(kRecorderThreadNamePrefix, 0), 0u) << tid;
}

TEST(RecorderThreads, AnEndedRecorderThreadIsForgotten) {
    int tid = 0;
    {
        HelperThread recorder(true);
        tid = recorder.tid();
        EXPECT_TRUE(is_recorder_thread(tid));
    }
    EXPECT_FALSE(is_recorder_thread(tid));
    EXPECT_FALSE(is_recorder_thread(0));
    EXPECT_FALSE(is_recorder_thread(-1));
}

// The creator announces the thread before it has a tid: a snapshot taken
// meanwhile waits until it registered, and does not list it.
TEST(RecorderThreads, ASnapshotWaitsForARecorderThreadThatIsStarting) {
    std::atomic<bool> go{false};
    std::atomic<int> tid{0};
    std::atomic<bool> stop{false};
    recorder_thread_starting();
    std::thread t([&] {
        while (!go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        tid = own_tid();
        register_this_recorder_thread("stacksage-late");
        while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        unregister_this_recorder_thread();
    });
    go = true;
    const auto threads = snapshot();
    ASSERT_NE(tid.load(), 0) << "the snapshot did not wait";
    EXPECT_EQ(threads.count(tid.load()), 0u);
    stop = true;
    t.join();
}

namespace {

// The quickest of a few snapshots: one that waits for a starting recorder
// thread sleeps at least 50 ms each time, while on a loaded machine one that
// does not wait may still be descheduled for that long now and then.
std::chrono::steady_clock::duration quickest_snapshot() {
    auto quickest = std::chrono::steady_clock::duration::max();
    for (int i = 0; i < 5; ++i) {
        const auto begin = std::chrono::steady_clock::now();
        snapshot();
        quickest = std::min(quickest, std::chrono::steady_clock::now() - begin);
    }
    return quickest;
}

}  // namespace

// A creation that failed must not make later snapshots wait; a wait is bounded.
TEST(RecorderThreads, AFailedStartOrANeverRegisteredThreadDoesNotBlockSnapshots) {
    recorder_thread_starting();
    recorder_thread_start_failed();
    EXPECT_LT(quickest_snapshot(), std::chrono::milliseconds(40));
    recorder_thread_starting();  // never registers
    const auto begin = std::chrono::steady_clock::now();
    snapshot();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(1));
    forget_recorder_threads();  // what a forked child does
    EXPECT_LT(quickest_snapshot(), std::chrono::milliseconds(40));
}

TEST(RecorderThreads, ForgettingClearsEveryRegistration) {
    HelperThread recorder(true);
    ASSERT_TRUE(is_recorder_thread(recorder.tid()));
    forget_recorder_threads();
    EXPECT_FALSE(is_recorder_thread(recorder.tid()));
}

// only_recorder_threads_left opens no descriptor: an application that has just
// closed every descriptor gets the numbers it gets without the recorder. Here
// no number is left to open at all (RLIMIT_NOFILE at the lowest free one),
// and the answer is still right: false while the main thread runs, true once
// it has left (as through pthread_exit) and only a recorder thread is left. Run in
// a forked child (its main thread leaves).
namespace {

std::atomic<bool> g_main_may_leave{false};

// 0: both answers right; 1-5: which step went wrong.
void* answer_without_descriptors(void*) {
    register_this_recorder_thread("stacksage-test");
    const int lowest_free = ::dup(0);
    if (lowest_free < 0) _exit(1);
    ::close(lowest_free);
    rlimit none_left{};
    if (::getrlimit(RLIMIT_NOFILE, &none_left) != 0) _exit(2);
    none_left.rlim_cur = static_cast<rlim_t>(lowest_free);
    if (::setrlimit(RLIMIT_NOFILE, &none_left) != 0 || ::dup(0) >= 0) _exit(3);
    if (only_recorder_threads_left()) _exit(4);  // the main thread is still there
    g_main_may_leave.store(true);
    for (int i = 0; i < 2000; ++i) {
        if (only_recorder_threads_left()) _exit(0);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    _exit(5);
}

}  // namespace

TEST(RecorderThreads, OnlyRecorderThreadsLeftIsAnsweredWithoutADescriptor) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        forget_recorder_threads();
        pthread_t t;
        if (pthread_create(&t, nullptr, &answer_without_descriptors, nullptr) != 0) _exit(6);
        while (!g_main_may_leave.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        // The main thread alone leaves (pthread_exit would unwind through
        // the test framework, which catches it).
        ::syscall(SYS_exit, 0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1-3: the test's setup; 4: true while the main thread runs; "
                                         "5: never true once it left; 6: no thread";
}
