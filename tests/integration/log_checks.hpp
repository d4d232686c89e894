// Assertions shared by the integration tests about the shape of event logs.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/integration/traced_run.hpp"

namespace stacksage::testing {

// Every line parsed, every event carries the common fields, the first one is
// process_start.
// The recorder's own problems in a run's standard error: its "stacksage:"
// lines other than the live watcher's warnings, which are news about the
// job (a storm of busy threads is over-subscribed), not a lost recording.
inline std::string recorder_problems(const std::string& err) {
    std::string problems;
    std::size_t at = 0;
    while (at < err.size()) {
        std::size_t end = err.find('\n', at);
        if (end == std::string::npos) end = err.size();
        const std::string line = err.substr(at, end - at);
        if (line.rfind("stacksage:", 0) == 0 && line.rfind("stacksage: live warning", 0) != 0) problems += line + "\n";
        at = end + 1;
    }
    return problems;
}

// A thread's start line may be written after the thread started (at its
// end, by the recorder's start-line writer, or before another line:
// docs/event-log.md, thread_start), but never after a line that names it:
// its own lines, and the affinity, thread_name and thread_usage_at_exit
// lines that target it. (A join's target_tid is written after the joined
// thread ended, so any order is right for it.)
inline void expect_starts_before_mentions(const ProcessLog& log) {
    std::set<std::int64_t> will_start, started;
    for (const auto& e : log.events)
        if (e.value("ev", "") == "thread_start") will_start.insert(e.value("tid", std::int64_t{-1}));
    for (const auto& e : log.events) {
        const std::string ev = e.value("ev", "");
        const std::int64_t tid = e.value("tid", std::int64_t{-1});
        if (ev == "thread_start") {
            started.insert(tid);
            continue;
        }
        std::vector<std::int64_t> named{tid};
        if ((ev == "affinity" || ev == "thread_name" || ev == "thread_usage_at_exit") && e.contains("target_tid"))
            named.push_back(e.value("target_tid", std::int64_t{-1}));
        for (std::int64_t t : named)
            EXPECT_TRUE(!will_start.count(t) || started.count(t))
                << "a line names thread " << t << " before its thread_start: " << e.dump();
    }
}

inline void expect_well_formed(const ProcessLog& log) {
    SCOPED_TRACE(log.file.string());
    for (const auto& e : log.errors) ADD_FAILURE() << e;
    ASSERT_FALSE(log.events.empty());
    EXPECT_EQ(log.start().value("ev", ""), "process_start");
    for (const auto& e : log.events) {
        EXPECT_EQ(e.value("v", 0), 1) << e.dump();
        EXPECT_TRUE(e.contains("ev") && e.contains("t") && e.contains("pid") && e.contains("tid"))
            << e.dump();
        EXPECT_FALSE(e.value("truncated", false)) << e.dump();
    }
    expect_starts_before_mentions(log);
}

// A log its process closed normally: truncated to its lines, nothing torn.
inline void expect_complete(const ProcessLog& log) {
    SCOPED_TRACE(log.file.string());
    EXPECT_EQ(log.nul_bytes, 0u);
    EXPECT_EQ(log.torn_lines, 0u);
    EXPECT_FALSE(log.torn_last_line);
    for (const auto& e : log.events) EXPECT_EQ(e.value("pid", -1), log.pid()) << e.dump();
}

// The log of the process whose executable has this base name and image.
inline const ProcessLog* find_log(const std::vector<ProcessLog>& logs, const std::string& exe,
                                  int image = 0, const char* origin = "exec") {
    for (const auto& l : logs)
        if (base_name(l.start().value("exe", nlohmann::json())) == exe &&
            l.image == image && l.start().value("origin", "") == origin)
            return &l;
    return nullptr;
}

inline std::string describe(const std::vector<ProcessLog>& logs) {
    std::string s;
    for (const auto& l : logs) s += "  " + l.file.filename().string() + ": " + l.start().dump() + "\n";
    return s;
}

}  // namespace stacksage::testing
