// What the recording of a process misses, from logs as the recorder leaves
// them: a log cut short (killed: its zero-filled tail; stopped: a log_stopped
// line) is an error next to the process and in the JSON; threads the
// recorder never saw created (the kernel's task list at exit, the CPU time
// no recorded thread accounts for) count as load and are said; an affinity
// call recorded under the calling thread's own tid pins that thread only;
// processes that ran one after another are said to, with the advice to run
// them side by side; run.json's unrecordable programs reach the report.
// The same cases run for real under the recorder in
// tests/system/test_live_odd_recordings.cpp.
#include <gtest/gtest.h>

#include <filesystem>

#include "parsers/process_log.hpp"
#include "parsers/run_directory.hpp"
#include "tests/support/analysed_run.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;

namespace {

const Finding* with_code(const AnalysisResult& a, FindingCode code) {
    for (const Finding& f : a.findings)
        if (f.code == code) return &f;
    return nullptr;
}

std::string head(const char* ev, std::int64_t t, std::int64_t tid = 700) {
    return "{\"v\":1,\"ev\":\"" + std::string(ev) + "\",\"t\":" + std::to_string(t) +
           ",\"pid\":700,\"tid\":" + std::to_string(tid);
}

const std::string kStart = head("process_start", 1'000'000'000) +
                           ",\"origin\":\"exec\",\"ppid\":1,\"host\":\"n01\",\"exe\":\"/bin/app\",\"cmdline\":[\"app\"],"
                           "\"cpuset\":\"0-3\"}\n";
std::string thread_lines(std::int64_t tid, std::int64_t start, std::int64_t end) {
    return head("thread_start", start, tid) + ",\"seq\":1,\"creator_tid\":700,\"cpuset\":\"0-3\"}\n" +
           head("thread_end", end, tid) + ",\"how\":\"return\",\"utime_us\":" + std::to_string((end - start) / 1000) +
           ",\"stime_us\":0,\"nvcsw\":1,\"nivcsw\":1}\n";
}

}  // namespace

// ---- where a log ends ---------------------------------------------------------

TEST(RecordingGaps, ALogEndingInTheMappingsZeroTailWasKilled) {
    std::string log = kStart + thread_lines(701, 1'100'000'000, 1'200'000'000);
    log += std::string(4096, '\0');  // the unused tail a SIGKILL leaves
    auto image = parse_process_log(log, "pid-700.jsonl");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_TRUE(image->summary.unfinished_tail);
    EXPECT_EQ(image->log_ends_early, "killed");
    EXPECT_EQ(image->end_how, "unknown");
}

TEST(RecordingGaps, ALogStoppedLineGivesTheCauseAndTheEnd) {
    const std::string log = kStart + thread_lines(701, 1'100'000'000, 1'200'000'000) +
                            head("log_stopped", 5'000'000'000) +
                            ",\"errno\":28,\"error\":\"No space left on device\",\"how\":\"exit\"}\n";
    auto image = parse_process_log(log, "pid-700.jsonl");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_FALSE(image->summary.unfinished_tail);
    EXPECT_EQ(image->log_ends_early, "log-stopped");
    EXPECT_EQ(image->log_stop_error, "No space left on device");
    EXPECT_EQ(image->end_t, 5'000'000'000);  // the process ran that long, though the log lost the rest
    EXPECT_EQ(image->end_how, "exit");
}

TEST(RecordingGaps, ACompleteLogDoesNotEndEarly) {
    const std::string log = kStart + thread_lines(701, 1'100'000'000, 1'200'000'000) +
                            head("process_end", 2'000'000'000) + ",\"how\":\"exit\",\"status\":0}\n";
    auto image = parse_process_log(log, "pid-700.jsonl");
    ASSERT_TRUE(image) << image.error().message;
    EXPECT_EQ(image->log_ends_early, "");
}

// "created 500 threads ... 0 warning(s)" was the whole report of a process
// killed half-way through its thread creations.
TEST(RecordingGaps, AKilledProcessIsAnErrorNextToItAndInTheJson) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess p = busy_process("n01", 700, -1, 4, "0-3");
    p.write_end = false;
    const auto log = run.add_process(p);
    {
        std::ofstream tail(log, std::ios::binary | std::ios::app);
        tail << std::string(8192, '\0');
    }
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::LogEndsEarly);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_EQ(f->severity, Severity::Error);
    EXPECT_EQ(f->node, "n01");
    EXPECT_NE(f->message.find("was killed before its end could be recorded"), std::string::npos) << f->message;
    EXPECT_NE(r.text.find("created 3 threads (4 with the main thread) on cpu(s) [0-3]; its log ends early (killed"),
              std::string::npos)
        << r.text;
    EXPECT_EQ(r.json["nodes"][0]["processes"][0]["log_ends_early"], "killed") << r.json["nodes"].dump(1);
    EXPECT_EQ(r.analysis.count(Severity::Error), 1u);
}

TEST(RecordingGaps, AStoppedLogNamesItsError) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess p = busy_process("n01", 700, -1, 2, "0-3");
    p.write_end = false;
    const auto log = run.add_process(p);
    {
        std::ofstream tail(log, std::ios::binary | std::ios::app);
        tail << "{\"v\":1,\"ev\":\"log_stopped\",\"t\":" << p.end_ns
             << ",\"pid\":700,\"tid\":700,\"errno\":28,\"error\":\"No space left on device\",\"how\":\"exit\"}\n";
    }
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::LogEndsEarly);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_NE(f->message.find("the log stopped recording before the process ended (No space left on device"),
              std::string::npos)
        << f->message;
    EXPECT_NE(f->suggestion.find("record into a directory with room"), std::string::npos) << f->suggestion;
    EXPECT_EQ(r.json["nodes"][0]["processes"][0]["log_ends_early"], "log-stopped");
}

TEST(RecordingGaps, CompleteLogsGiveNoSuchFinding) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 700, -1, 4, "0-3"));
    const ReportedRun r = report_of(dir.str());
    EXPECT_EQ(with_code(r.analysis, FindingCode::LogEndsEarly), nullptr) << r.text;
    EXPECT_TRUE(r.json["nodes"][0]["processes"][0]["log_ends_early"].is_null());
}

// ---- the same in a node file (OUT/<host>/node.events) --------------------------

// A stream whose end the recorder never recorded in the node file was cut
// short by a kill, whatever its text ends with (a stream written with pwrite
// where the file system has no fallocate has no zero-filled tail).
TEST(RecordingGaps, ANodeStreamWhoseEndWasNeverRecordedWasKilled) {
    const std::string log = kStart + thread_lines(701, 1'100'000'000, 1'200'000'000);
    auto killed = parse_process_log(log, "n01/node.events#1", false);
    ASSERT_TRUE(killed) << killed.error().message;
    EXPECT_EQ(killed->log_ends_early, "killed");
    // Its end recorded, no end event: not known why (an older recorder).
    auto ended = parse_process_log(log, "n01/node.events#1", true);
    ASSERT_TRUE(ended) << ended.error().message;
    EXPECT_EQ(ended->log_ends_early, "unknown");
}

TEST(RecordingGaps, AKilledStreamOfANodeFileIsAnErrorNextToItsProcess) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess p = busy_process("n01", 700, -1, 4, "0-3");
    p.write_end = false;  // the stream's end is not recorded either
    run.add_process_stream(p);
    run.add_process_stream(busy_process("n01", 701, -1, 2, "0-3"));
    run.write_node_files();
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::LogEndsEarly);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_EQ(f->severity, Severity::Error);
    EXPECT_NE(f->message.find("was killed before its end could be recorded"), std::string::npos) << f->message;
    const auto& processes = r.json["nodes"][0]["processes"];
    ASSERT_EQ(processes.size(), 2u) << processes.dump(1);
    EXPECT_EQ(processes[0]["log_ends_early"], "killed") << processes.dump(1);
    EXPECT_TRUE(processes[1]["log_ends_early"].is_null()) << processes.dump(1);
    EXPECT_EQ(r.analysis.count(Severity::Error), 1u);
}

// A stopped stream: the recorder ends it (its length recorded) after the
// log_stopped line it kept room for.
TEST(RecordingGaps, AStoppedStreamOfANodeFileNamesItsError) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess p = busy_process("n01", 700, -1, 2, "0-3");
    p.write_end = false;
    const std::string text = event_log_text(p) + "{\"v\":1,\"ev\":\"log_stopped\",\"t\":" + std::to_string(p.end_ns) +
                             ",\"pid\":700,\"tid\":700,\"errno\":27,\"error\":\"File too large\",\"how\":\"exit\"}\n";
    NodeFileWriter node("n01");
    node.add_stream(text, 700, -1, true);
    SyntheticRun::write_file(dir.path() / "n01" / "node.events", node.bytes());
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::LogEndsEarly);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_NE(f->message.find("the log stopped recording before the process ended (File too large"),
              std::string::npos)
        << f->message;
    EXPECT_EQ(r.json["nodes"][0]["processes"][0]["log_ends_early"], "log-stopped");
}

// ---- threads the recorder did not see created ----------------------------------

namespace {

// A process whose main thread computed 10 ms of a 1 s life, while glibc's
// threads computed: 2 alive at its end (300 ms each, in the kernel's task
// list), the rest ended before (the remainder of the process's total).
std::string glibc_threads_log(std::int64_t total_cpu_us) {
    return kStart +
           head("thread_usage_at_exit", 1'999'000'000) +
           ",\"target_tid\":710,\"cpu_us\":300000,\"duration_ns\":600000000,\"untraced\":true,\"name\":\"timer\","
           "\"cpuset\":\"0-3\"}\n" +
           head("thread_usage_at_exit", 1'999'000'000) +
           ",\"target_tid\":711,\"cpu_us\":300000,\"duration_ns\":500000000,\"untraced\":true,\"name\":\"aio\","
           "\"cpuset\":\"2\"}\n" +
           head("process_end", 2'000'000'000) + ",\"how\":\"exit\",\"status\":0,\"utime_us\":" +
           std::to_string(total_cpu_us) +
           ",\"stime_us\":0,\"nvcsw\":10,\"nivcsw\":10,\"main_cpu_us\":10000,\"recorder_cpu_us\":5000,"
           "\"threads_created\":0,\"threads_untraced\":0}\n";
}

}  // namespace

TEST(RecordingGaps, UntracedThreadsAtTheEndAreThreadsWithTheirTimeNameAndMask) {
    auto image = parse_process_log(glibc_threads_log(615'000), "pid-700.jsonl");
    ASSERT_TRUE(image) << image.error().message;
    ASSERT_EQ(image->threads.size(), 3u);
    const ThreadRecord& timer = image->threads[1];
    EXPECT_TRUE(timer.untraced);
    EXPECT_EQ(timer.name, "timer");
    EXPECT_EQ(timer.utime_us, 300000);
    EXPECT_EQ(timer.start_t, 1'999'000'000 - 600'000'000);  // its age, from the kernel
    EXPECT_EQ(image->threads[2].masks.at(0).cpuset.to_list_string(), "2");
    EXPECT_EQ(image->recorder_cpu_us, 5000);
}

TEST(RecordingGaps, UntracedWorkCountsAsLoadAndIsSaid) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    // 600 ms on the two alive, 400 ms on threads that ended unseen, 10 ms main, 5 ms recorder.
    SyntheticRun::write_file(dir.path() / "n01" / "pid-700.jsonl", glibc_threads_log(1'015'000));
    const ReportedRun r = report_of(dir.str());
    const ProcessSummary& p = r.analysis.processes.at(0);
    EXPECT_EQ(p.untraced_threads, 2u);
    EXPECT_EQ(p.created_threads, 2u);  // the unseen flow is no thread of its own
    EXPECT_EQ(p.unseen_cpu_us, 400'000);
    const Finding* f = with_code(r.analysis, FindingCode::UntracedThreads);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_NE(f->message.find("2 threads alive at the end (0.60 s of CPU time) and threads that ended unseen "
                              "(0.40 s of CPU time)"),
              std::string::npos)
        << f->message;
    EXPECT_NE(f->detail.find("timer_create and aio_* with SIGEV_THREAD"), std::string::npos);
    EXPECT_NE(r.text.find("2 threads created unseen (glibc's own, a raw clone) were alive at its end; threads that "
                          "ended unseen used 0.40 s of CPU"),
              std::string::npos)
        << r.text;
    EXPECT_EQ(r.json["nodes"][0]["processes"][0]["unseen_cpu_us"], 400'000);
    // Load: the unseen flow is busy, not a service thread.
    bool unseen_busy = false;
    for (const FlowView& flow : r.analysis.view.flows)
        if (flow.kind == FlowKind::Unseen) unseen_busy = !flow.service && flow.cpu_time_us == 400'000;
    EXPECT_TRUE(unseen_busy);
}

TEST(RecordingGaps, AFewMillisecondsUnaccountedForAreNoUnseenWork) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticRun::write_file(dir.path() / "n01" / "pid-700.jsonl", glibc_threads_log(625'000));  // 10 ms left over
    const ReportedRun r = report_of(dir.str());
    EXPECT_EQ(r.analysis.processes.at(0).unseen_cpu_us, 0);
}

// A thread the log only glimpsed (an affinity call from a raw clone) takes
// the CPU time no recorded thread accounts for, rather than a flow of its own.
TEST(RecordingGaps, ACloneGlimpsedInAnAffinityCallTakesTheUnseenTime) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    const std::string log =
        kStart +
        head("affinity", 1'100'000'000, 701) +
        ",\"api\":\"sched_setaffinity\",\"target_tid\":701,\"target_is_caller\":true,\"target_in_process\":true,"
        "\"caller_module\":\"/bin/app\",\"callers\":[],\"old_cpuset\":\"0-3\",\"requested_cpuset\":\"3\","
        "\"cpuset\":\"3\",\"rc\":0}\n" +
        head("process_end", 2'000'000'000) +
        ",\"how\":\"exit\",\"status\":0,\"utime_us\":300000,\"stime_us\":0,\"nvcsw\":1,\"nivcsw\":1,"
        "\"main_cpu_us\":10000,\"recorder_cpu_us\":0,\"threads_created\":0,\"threads_untraced\":0}\n";
    SyntheticRun::write_file(dir.path() / "n01" / "pid-700.jsonl", log);
    const ReportedRun r = report_of(dir.str());
    const RunView& view = r.analysis.view;
    ASSERT_EQ(view.flows.size(), 2u);
    // The main thread was never pinned; the clone was, and did the work.
    EXPECT_EQ(view.flows[0].intervals.back().cpuset.to_list_string(), "0-3");
    EXPECT_EQ(view.flows[1].tid, 701);
    EXPECT_EQ(view.flows[1].intervals.back().cpuset.to_list_string(), "3");
    EXPECT_EQ(view.flows[1].cpu_time_us, 290'000);
    EXPECT_EQ(r.analysis.processes.at(0).unseen_cpu_us, 0);
}

// ---- processes one after another -------------------------------------------------

TEST(RecordingGaps, ProcessesThatNeverOverlappedAreSaidToRunOneAfterAnother) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    for (int i = 0; i < 50; ++i) {
        SyntheticProcess p = busy_process("n01", 2000 + i, -1, 1, "0-3");
        p.start_ns = 1'000'000'000 + i * 100'000'000LL;
        p.end_ns = p.start_ns + 90'000'000;
        run.add_process(p);
    }
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::UnderloadedReservation);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_NE(f->message.find("Only 1 thread of 1 process"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("its 50 processes ran one after another, never two at once"), std::string::npos)
        << f->message;
    EXPECT_EQ(f->figure("sequential_processes"), 50);
    EXPECT_NE(f->suggestion.find("The 50 processes ran one after another: start up to 4 of them at a time (xargs -P 4"),
              std::string::npos)
        << f->suggestion;
    EXPECT_EQ(f->suggestion.find("threads per process"), std::string::npos) << f->suggestion;
}

TEST(RecordingGaps, ProcessesThatOverlapAreNotSequential) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:8 pu:1");
    for (int i = 0; i < 2; ++i) run.add_process(busy_process("n01", 2000 + i, -1, 1, "0-7"));
    const ReportedRun r = report_of(dir.str());
    const Finding* f = with_code(r.analysis, FindingCode::UnderloadedReservation);
    ASSERT_NE(f, nullptr) << r.text;
    EXPECT_EQ(f->message.find("one after another"), std::string::npos) << f->message;
    EXPECT_EQ(f->figure("sequential_processes"), 0);
}

// ---- programs the recorder cannot enter ---------------------------------------------

TEST(RecordingGaps, RunJsonsUnrecordableProgramsReachTheReport) {
    TempDir dir;
    RunRecord record;
    record.command = {"./static_app"};
    record.unrecordable = {"./static_app cannot be recorded: it is statically linked"};
    SyntheticRun::write_file(dir.path() / "run.json", run_record_text(record));
    // No log at all: the loader's error says why, not "run it under stacksage run".
    Result<LoadedRun> loaded = load_run(dir.str());
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message.find("holds no event logs: ./static_app cannot be recorded: it is statically "
                                          "linked"),
              std::string::npos)
        << loaded.error().message;
    EXPECT_EQ(loaded.error().message.find("Run the job again"), std::string::npos);
    // With logs (a wrapper recorded), an error note.
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 700, -1, 1, "0-3"));
    const ReportedRun r = report_of(dir.str());
    bool noted = false;
    for (const LoadNote& n : r.run.notes)
        noted = noted || (n.level == LoadNote::Level::Error && n.file == "run.json" &&
                          n.message.find("statically linked; it ran untraced") != std::string::npos);
    EXPECT_TRUE(noted);
}
