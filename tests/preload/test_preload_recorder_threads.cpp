// The recorder's own threads (preload/recorder_threads.hpp) and the thread
// snapshot that must leave them out (preload/thread_snapshot.hpp).
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

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

// A creation that failed must not make later snapshots wait; a wait is bounded.
TEST(RecorderThreads, AFailedStartOrANeverRegisteredThreadDoesNotBlockSnapshots) {
    recorder_thread_starting();
    recorder_thread_start_failed();
    auto begin = std::chrono::steady_clock::now();
    snapshot();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(40));
    recorder_thread_starting();  // never registers
    begin = std::chrono::steady_clock::now();
    snapshot();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(1));
    forget_recorder_threads();  // what a forked child does
    begin = std::chrono::steady_clock::now();
    snapshot();
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(40));
}

TEST(RecorderThreads, ForgettingClearsEveryRegistration) {
    HelperThread recorder(true);
    ASSERT_TRUE(is_recorder_thread(recorder.tid()));
    forget_recorder_threads();
    EXPECT_FALSE(is_recorder_thread(recorder.tid()));
}
