// An exec whose environment no longer carries the recorder (exec.untraced):
// the image that ran untraced is named in the log's notes, which the report
// shows; an exec that failed names nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "parsers/process_log.hpp"

using namespace stacksage;

namespace {

const std::string kStart =
    R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"origin":"exec","image":0,"host":"n01","exe":"/bin/app","cmdline":["/bin/app"],"cpuset":"0-1","cpu":0})"
    "\n";
const std::string kUntracedExec =
    R"({"v":1,"ev":"exec","t":500,"pid":7,"tid":7,"path":"/bin/tool","argv":["tool"],"argc":1,"untraced":"the environment passed to exec has no LD_PRELOAD"})"
    "\n";
const std::string kTracedExec =
    R"({"v":1,"ev":"exec","t":500,"pid":7,"tid":7,"path":"/bin/tool","argv":["tool"],"argc":1})"
    "\n";
const std::string kExecFailed =
    R"({"v":1,"ev":"exec_failed","t":501,"pid":7,"tid":7,"path":"/bin/tool","errno":2})"
    "\n";

bool has_note(const ProcessImage& p, const std::string& text) {
    return std::any_of(p.notes.begin(), p.notes.end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace

TEST(ProcessLogUntracedExec, TheImageThatRanUntracedIsNamed) {
    auto r = parse_process_log(kStart + kUntracedExec, "log");
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(r->end_how, "exec");
    EXPECT_TRUE(has_note(*r, "pid 7 exec'ed /bin/tool, which ran untraced (the environment passed to exec has no "
                             "LD_PRELOAD): what it did is not recorded"));
}

TEST(ProcessLogUntracedExec, AFollowedOrFailedExecNamesNothing) {
    auto traced = parse_process_log(kStart + kTracedExec, "log");
    ASSERT_TRUE(traced) << traced.error().message;
    EXPECT_FALSE(has_note(*traced, "untraced"));
    auto failed = parse_process_log(kStart + kUntracedExec + kExecFailed, "log");
    ASSERT_TRUE(failed) << failed.error().message;
    EXPECT_FALSE(has_note(*failed, "untraced"));
}
