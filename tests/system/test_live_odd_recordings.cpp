// Recordings that are incomplete or odd, run for real under `stacksage run`
// (examples/odd_recordings.c; docs/RELIABILITY.md, the section of that name):
// a process killed half-way through its threads, a log that cannot grow
// (a file-size limit), glibc's own threads (SIGEV_THREAD timers, aio), a raw
// clone thread that binds itself, children run one after another, and
// programs LD_PRELOAD cannot enter (static, set-user-ID, file capabilities).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/recorded_events.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

namespace {

using stacksage::testing::shell;
using stacksage::testing::TempDir;

const std::string kBin = STACKSAGE_BINARY_DIR;
const std::string kCli = kBin + "/cli/stacksage";
const std::string kApp = kBin + "/examples/odd_recordings";

bool have_recorder() {
    return stacksage::testing::is_executable(kBin + "/preload/libstacksage-preload.so") &&
           stacksage::testing::is_executable(kApp);
}

nlohmann::json json_report(const std::string& out) {
    const auto report = shell(kCli + " report " + out + " --format json 2>/dev/null");
    EXPECT_EQ(report.exit_code, 0) << report.output;
    auto j = nlohmann::json::parse(report.output, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << report.output;
    return j;
}

const nlohmann::json* finding(const nlohmann::json& j, const std::string& code) {
    for (const auto& f : j["findings"])
        if (f["code"] == code) return &f;
    return nullptr;
}

// The log lines of the run's only event log (a stream of OUT/<host>/node.events).
std::vector<nlohmann::json> log_events(const std::string& out) { return stacksage::testing::recorded_events(out); }

}  // namespace

TEST(LiveOddRecordings, AProcessKilledHalfWayThroughItsThreadsIsAnError) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell(kCli + " run -q -o " + out + " -- " + kApp + " killed-mid-threads 400");
    EXPECT_EQ(run.exit_code, 128 + 9) << run.output;  // killed, as without the recorder

    const auto text = shell(kCli + " report " + out);
    EXPECT_NE(text.output.find("created 200 threads (201 with the main thread)"), std::string::npos) << text.output;
    EXPECT_NE(text.output.find("; its log ends early (killed before its end was recorded)"), std::string::npos)
        << text.output;
    const auto check = shell(kCli + " check " + out + " --fail-on error");
    EXPECT_EQ(check.exit_code, 1) << check.output;
    auto j = json_report(out);
    EXPECT_EQ(j["nodes"][0]["processes"][0]["log_ends_early"], "killed") << j["nodes"].dump(1);
    const auto* f = finding(j, "log-ends-early");
    ASSERT_NE(f, nullptr) << j["findings"].dump(1);
    EXPECT_EQ((*f)["severity"], "error");
}

// A log that can no longer grow: a file-size limit (the disk-full case
// without a full disk), with SIGXFSZ ignored so that the write fails instead.
TEST(LiveOddRecordings, ALogThatCannotGrowSaysSoAndIsAnError) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    if (stacksage::testing::which("bash").empty()) GTEST_SKIP() << "no bash";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell("bash -c 'trap \"\" XFSZ; ulimit -f 400; exec " + kCli + " run -q -o " + out + " -- " +
                           kApp + " threads 2000'");
    EXPECT_EQ(run.exit_code, 0) << run.output;  // the application runs on
    EXPECT_NE(run.output.find("cannot grow (File too large)"), std::string::npos) << run.output;

    auto events = log_events(out);
    ASSERT_FALSE(events.empty());
    EXPECT_EQ(events.back()["ev"], "log_stopped") << events.back().dump();
    EXPECT_EQ(events.back()["errno"], 27);  // EFBIG
    EXPECT_EQ(events.back()["how"], "exit");

    auto j = json_report(out);
    EXPECT_EQ(j["nodes"][0]["processes"][0]["log_ends_early"], "log-stopped");
    const auto* f = finding(j, "log-ends-early");
    ASSERT_NE(f, nullptr) << j["findings"].dump(1);
    EXPECT_NE((*f)["message"].get<std::string>().find("(File too large: a full disk or a file-size limit)"),
              std::string::npos)
        << (*f)["message"];
    EXPECT_EQ(shell(kCli + " check " + out + " --fail-on error").exit_code, 1);
}

// 21 notifications computing about 30 ms each, all on threads glibc made.
TEST(LiveOddRecordings, GlibcsOwnThreadsAreCountedAndTheirTimeIsLoad) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell(kCli + " run -q -o " + out + " -- " + kApp + " glibc-threads");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto j = json_report(out);
    auto& p = j["nodes"][0]["processes"][0];
    // Alive at the end (found in the task list) or ended unseen: their CPU time is there.
    std::int64_t untraced_cpu_us = p.value("unseen_cpu_us", std::int64_t{0});
    for (const auto& flow : p["flows"])
        if (flow["tid"] != j["nodes"][0]["processes"][0]["pid"] && !flow["cpu_us"].is_null())
            untraced_cpu_us += flow["cpu_us"].get<std::int64_t>();
    EXPECT_GE(untraced_cpu_us, 21 * 30'000 * 6 / 10) << p.dump(1);
    const auto* f = finding(j, "untraced-threads");
    ASSERT_NE(f, nullptr) << j["findings"].dump(1);
    EXPECT_NE((*f)["detail"].get<std::string>().find("SIGEV_THREAD"), std::string::npos);
    // The report no longer says the process created no threads and did nothing.
    const auto text = shell(kCli + " report " + out);
    EXPECT_TRUE(text.output.find("unseen") != std::string::npos) << text.output;
}

TEST(LiveOddRecordings, ARawCloneBindingItselfIsNotTheMainThread) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell(kCli + " run -q -o " + out + " -- " + kApp + " raw-clone-affinity");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto events = log_events(out);
    ASSERT_FALSE(events.empty());
    const auto pid = events.front()["pid"];
    bool seen = false;
    for (auto& e : events)
        if (e["ev"] == "affinity") {
            seen = true;
            EXPECT_NE(e["tid"], pid) << e.dump();
            EXPECT_EQ(e["target_tid"], e["tid"]) << e.dump();
        }
    EXPECT_TRUE(seen);
    const auto text = shell(kCli + " report " + out);
    const std::string main_pinned = "thread " + std::to_string(pid.get<long>()) + " (pid";
    EXPECT_EQ(text.output.find(main_pinned), std::string::npos) << text.output;
}

TEST(LiveOddRecordings, ChildrenRunOneAfterAnotherAreSaidToBe) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell(kCli + " run -q -o " + out + " -- " + kApp + " sequential 200");
    ASSERT_EQ(run.exit_code, 0) << run.output;
    auto j = json_report(out);
    const nlohmann::json* f = finding(j, "underloaded-reservation");
    if (f == nullptr) f = finding(j, "idle-resources");
    ASSERT_NE(f, nullptr) << j["findings"].dump(1);
    EXPECT_NE((*f)["message"].get<std::string>().find("processes ran one after another, never two at once"),
              std::string::npos)
        << (*f)["message"];
    EXPECT_NE((*f)["suggestion"].get<std::string>().find("of them at a time (xargs -P"), std::string::npos)
        << (*f)["suggestion"];
}

TEST(LiveOddRecordings, AStaticProgramIsSaidToBeUnrecordable) {
    const std::string app = kBin + "/examples/odd_recordings_static";
    if (!have_recorder() || !stacksage::testing::is_executable(app)) GTEST_SKIP() << "no static example";
    TempDir dir;
    const std::string out = dir.str() + "/out";
    const auto run = shell(kCli + " run -o " + out + " -- " + app + " threads 3");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("cannot be recorded: it is statically linked"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("0 processes recorded in 0 logs from 0 hosts; " + app + " ran untraced (static)"),
              std::string::npos)
        << run.output;
    const auto report = shell(kCli + " report " + out);
    EXPECT_NE(report.exit_code, 0);
    EXPECT_NE(report.output.find("holds no event logs: " + app + " cannot be recorded: it is statically linked"),
              std::string::npos)
        << report.output;
    EXPECT_EQ(report.output.find("Run the job again"), std::string::npos) << report.output;
}

// The loader's secure-execution mode: as root, a set-user-ID program owned
// by another user; as another user, a program with file capabilities.
TEST(LiveOddRecordings, SetuidAndCapabilityProgramsAreSaidToBeUnrecordable) {
    if (!have_recorder()) GTEST_SKIP() << "no recorder or example";
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (chown, setcap)";
    TempDir dir;
    std::filesystem::permissions(dir.path(), std::filesystem::perms::all);
    const std::string suid = dir.str() + "/suid_app";
    std::filesystem::copy_file(kApp, suid);
    ASSERT_EQ(::chown(suid.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chmod(suid.c_str(), 04755), 0);
    auto run = shell(kCli + " run -o " + dir.str() + "/out1 -- " + suid + " threads 3");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("cannot be recorded: it is set-user-ID (owner uid 65534, you are uid 0)"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("0 processes recorded"), std::string::npos) << run.output;
    EXPECT_NE(shell(kCli + " report " + dir.str() + "/out1").output.find("is set-user-ID"), std::string::npos);

    const std::string setcap = stacksage::testing::which("setcap");
    const std::string setpriv = stacksage::testing::which("setpriv");
    if (setcap.empty() || setpriv.empty()) GTEST_SKIP() << "no setcap or setpriv";
    const std::string capped = dir.str() + "/cap_app";
    std::filesystem::copy_file(kApp, capped);
    if (shell(setcap + " cap_net_bind_service+ep " + capped).exit_code != 0) GTEST_SKIP() << "setcap failed";
    run = shell(setpriv + " --reuid=65534 --regid=65534 --clear-groups " + kCli + " run -o " + dir.str() +
                "/out2 -- " + capped + " threads 3");
    EXPECT_EQ(run.exit_code, 0) << run.output;
    EXPECT_NE(run.output.find("cannot be recorded: it has file capabilities"), std::string::npos) << run.output;
}
