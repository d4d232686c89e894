// A thread that ended within 1 ms of its start has one line: its
// thread_start carries its end (end_t, how, end_cpu). The reader makes of it
// the thread a thread_start and a short-lived thread_end would have made,
// and a start written late (after lines of other threads) changes nothing.
#include <gtest/gtest.h>

#include <string>

#include "parsers/process_log.hpp"

using namespace stacksage;

namespace {

const std::string kStart =
    R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"origin":"exec","image":0,"host":"n01","exe":"/bin/app","cmdline":["/bin/app"],"cpuset":"0-3","cpu":0})"
    "\n";
const std::string kShortThread =
    R"({"v":1,"ev":"thread_start","t":1000,"pid":7,"tid":8,"seq":1,"pthread":"0x7f00","creator_tid":7,"creator_module":"/bin/app","start_module":"/bin/app","start_offset":"0x10","create_t":990,"cpuset":"0-1","cpu":1,"end_t":1400,"how":"return","end_cpu":0,"duration_ns":400})"
    "\n";
const std::string kTwoLines =
    R"({"v":1,"ev":"thread_start","t":1000,"pid":7,"tid":8,"seq":1,"pthread":"0x7f00","creator_tid":7,"creator_module":"/bin/app","start_module":"/bin/app","start_offset":"0x10","create_t":990,"cpuset":"0-1","cpu":1})"
    "\n"
    R"({"v":1,"ev":"thread_end","t":1400,"pid":7,"tid":8,"how":"return","seq":1,"short_lived":true,"cpu":0,"duration_ns":400})"
    "\n";
const std::string kEnd =
    R"({"v":1,"ev":"process_end","t":5000,"pid":7,"tid":7,"how":"exit","status":0})"
    "\n";

const ThreadRecord* thread_with_tid(const ProcessImage& p, std::int64_t tid) {
    for (const ThreadRecord& t : p.threads)
        if (t.tid == tid) return &t;
    return nullptr;
}

}  // namespace

TEST(ProcessLogShortThreads, OneLineIsTheThreadsStartAndEnd) {
    auto one = parse_process_log(kStart + kShortThread + kEnd, "one");
    auto two = parse_process_log(kStart + kTwoLines + kEnd, "two");
    ASSERT_TRUE(one) << one.error().message;
    ASSERT_TRUE(two) << two.error().message;
    const ThreadRecord* a = thread_with_tid(*one, 8);
    const ThreadRecord* b = thread_with_tid(*two, 8);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(one->threads.size(), 2u);
    EXPECT_EQ(a->start_t, 1000);
    EXPECT_EQ(a->end_t, 1400);
    EXPECT_TRUE(a->ended_itself);
    EXPECT_TRUE(a->short_lived);
    EXPECT_EQ(a->end_how, "return");
    EXPECT_EQ(a->first_cpu, 1);
    EXPECT_EQ(a->last_cpu, 0);
    EXPECT_EQ(a->seq, b->seq);
    EXPECT_EQ(a->creator_tid, b->creator_tid);
    EXPECT_EQ(a->create_t, b->create_t);
    EXPECT_EQ(a->utime_us, b->utime_us);
    EXPECT_EQ(a->nvcsw, b->nvcsw);
    ASSERT_EQ(a->masks.size(), b->masks.size());
    EXPECT_EQ(a->masks[0].cpuset, b->masks[0].cpuset);
    EXPECT_EQ(a->masks[0].t, 1000);
    EXPECT_EQ(a->masks[0].reason, b->masks[0].reason);
}

// The recorder writes a thread's start when the thread is 1 ms old, after
// lines other threads wrote meanwhile: its t, not its place, is its start.
TEST(ProcessLogShortThreads, AStartWrittenLateKeepsItsTime) {
    const std::string main_line =
        R"({"v":1,"ev":"thread_name","t":3000,"pid":7,"tid":7,"target_tid":7,"target_pthread":"0x1","name":"main"})"
        "\n";
    const std::string late_start =
        R"({"v":1,"ev":"thread_start","t":1000,"pid":7,"tid":9,"seq":1,"pthread":"0x7f00","creator_tid":7,"creator_module":"/bin/app","start_module":"/bin/app","start_offset":"0x10","create_t":990,"cpuset":"0-1","cpu":1})"
        "\n";
    auto r = parse_process_log(kStart + main_line + late_start + kEnd, "late");
    ASSERT_TRUE(r) << r.error().message;
    const ThreadRecord* t = thread_with_tid(*r, 9);
    ASSERT_TRUE(t);
    EXPECT_EQ(t->start_t, 1000);
    EXPECT_EQ(t->end_t, 5000);  // lived until the process ended
    EXPECT_FALSE(t->short_lived);
}

// An end_t before the line's own t is no end (an altered file): the thread
// lives on as an unended one.
TEST(ProcessLogShortThreads, AnEndBeforeTheStartIsIgnored) {
    std::string altered = kShortThread;
    altered.replace(altered.find("\"end_t\":1400"), 12, "\"end_t\":900\x20");
    auto r = parse_process_log(kStart + altered + kEnd, "altered");
    ASSERT_TRUE(r) << r.error().message;
    const ThreadRecord* t = thread_with_tid(*r, 8);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->ended_itself);
    EXPECT_EQ(t->end_t, 5000);
}
