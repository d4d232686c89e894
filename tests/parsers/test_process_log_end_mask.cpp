// The cross-check: a thread's mask is read again at its end. One that is not
// the last mask recorded was changed behind the intercepted calls (a raw
// system call, `taskset -p`, a change of the cgroup's cpuset): it is counted
// and told, and the timeline keeps only what is known of when.
#include <gtest/gtest.h>

#include <string>

#include "parsers/image_notes.hpp"
#include "parsers/process_log.hpp"

using namespace stacksage;

namespace {

const std::string kStart =
    R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"origin":"exec","image":0,"host":"n01","exe":"/bin/app","cmdline":["/bin/app"],"cpuset":"0-3","cpu":0})"
    "\n"
    R"({"v":1,"ev":"thread_start","t":1000,"pid":7,"tid":8,"seq":1,"pthread":"0x7f00","creator_tid":7,"creator_module":"/bin/app","start_module":"/bin/app","start_offset":"0x10","create_t":990,"cpuset":"0-3","cpu":1})"
    "\n";
const std::string kEnd =
    R"({"v":1,"ev":"process_end","t":9000000,"pid":7,"tid":7,"how":"exit","status":0})"
    "\n";

std::string thread_end(const std::string& cpuset) {
    return R"({"v":1,"ev":"thread_end","t":8000000,"pid":7,"tid":8,"how":"return","seq":1,"cpu":2,"utime_us":7000,"stime_us":0,"cpuset":")" +
           cpuset + "\"}\n";
}

}  // namespace

TEST(ProcessLogEndMask, AMaskChangedBehindTheRecordersBackIsCountedAndTold) {
    auto image = parse_process_log(kStart + thread_end("2") + kEnd, "log");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->masks_changed_unseen, 1u);
    const std::vector<LoadNote> notes = notes_of_image(*image);
    ASSERT_EQ(notes.size(), 1u);
    EXPECT_EQ(notes[0].level, LoadNote::Level::Info);
    EXPECT_TRUE(notes[0].message.starts_with("1 thread(s) ended with a CPU mask other than the one recorded last "
                                             "(thread 8: 0-3 recorded last, 2 at its end)"))
        << notes[0].message;
    // When it changed is not known: the timeline is the recorded masks.
    for (const ThreadRecord& t : image->threads)
        if (t.tid == 8) {
            ASSERT_EQ(t.masks.size(), 1u);
            EXPECT_EQ(t.masks[0].cpuset.to_list_string(), "0-3");
            ASSERT_TRUE(t.end_mask.has_value());
            EXPECT_EQ(t.end_mask->cpuset.to_list_string(), "2");
        }
}

TEST(ProcessLogEndMask, TheSameMaskAtTheEndIsNothingToTell) {
    auto image = parse_process_log(kStart + thread_end("0-3") + kEnd, "log");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->masks_changed_unseen, 0u);
    EXPECT_TRUE(notes_of_image(*image).empty());
}

TEST(ProcessLogEndMask, AnAffinityCallSeenIsNoSurprise) {
    const std::string affinity =
        R"({"v":1,"ev":"affinity","t":2000,"pid":7,"tid":8,"target_tid":8,"api":"pthread_setaffinity_np","cpuset":"2","rc":0})"
        "\n";
    auto image = parse_process_log(kStart + affinity + thread_end("2") + kEnd, "log");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->masks_changed_unseen, 0u);
}
