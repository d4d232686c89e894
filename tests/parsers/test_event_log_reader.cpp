// Reading event logs: what real runs leave behind.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "parsers/event_log_reader.hpp"
#include "parsers/process_log.hpp"

using namespace stacksage;

namespace {
const std::string kStart =
    R"({"v":1,"ev":"process_start","t":100,"pid":7,"tid":7,"host":"n01","rank":0,"launcher":null,"exe":"/bin/app","cmdline":["/bin/app"],"cpuset":"0-3","cpu":1,"cgroup_cpuset":"0-3","online_cpus":"0-7","env":{"OMP_NUM_THREADS":"4"},"identity":{"OMPI_COMM_WORLD_RANK":"0"}})"
    "\n";
const std::string kThread =
    R"({"v":1,"ev":"thread_start","t":200,"pid":7,"tid":8,"seq":1,"creator_tid":7,"creator_module":"/lib/libgomp.so.1","start_module":"/lib/libgomp.so.1","create_t":150,"cpuset":"1","cpu":1})"
    "\n";
const std::string kEnd =
    R"({"v":1,"ev":"process_end","t":1000,"pid":7,"tid":7,"how":"exit","status":0,"utime_us":500,"stime_us":100})"
    "\n";

std::vector<std::string> names(std::string_view text, EventLogSummary* summary = nullptr, std::string* error = nullptr) {
    std::vector<std::string> out;
    auto r = parse_event_log(text, "log.jsonl", [&](const EventLogEvent& e) { out.emplace_back(e.name); });
    if (r && summary) *summary = *r;
    if (!r && error) *error = r.error().message;
    return out;
}
}  // namespace

TEST(EventLogReader, ReadsEveryEventInOrder) {
    EventLogSummary s;
    EXPECT_EQ(names(kStart + kThread + kEnd, &s), (std::vector<std::string>{"process_start", "thread_start", "process_end"}));
    EXPECT_EQ(s.events, 3u);
    EXPECT_FALSE(s.torn_last_line);
}

TEST(EventLogReader, IgnoresATornLastLine) {
    EventLogSummary s;
    const std::string torn = kStart + kThread + R"({"v":1,"ev":"thread_end","t":9)";
    EXPECT_EQ(names(torn, &s).size(), 2u);
    EXPECT_TRUE(s.torn_last_line);
}

TEST(EventLogReader, KeepsALastLineThatOnlyLacksItsNewline) {
    EventLogSummary s;
    std::string text = kStart + kEnd;
    text.pop_back();
    EXPECT_EQ(names(text, &s).size(), 2u);
    EXPECT_FALSE(s.torn_last_line);
}

TEST(EventLogReader, CountsAndSkipsUnknownEvents) {
    EventLogSummary s;
    const std::string future = R"({"v":2,"ev":"gpu_kernel","t":300,"pid":7,"tid":7,"new_field":1})" "\n";
    EXPECT_EQ(names(kStart + future + future + kEnd, &s).size(), 2u);
    ASSERT_EQ(s.unknown_events.size(), 1u);
    EXPECT_EQ(s.unknown_events.begin()->first, "gpu_kernel");
    EXPECT_EQ(s.unknown_events.begin()->second, 2u);
    EXPECT_EQ(s.newest_version, 2);
}

TEST(EventLogReader, ACorruptLineBeforeTheLastMakesTheFileCorrupt) {
    std::string error;
    EventLogSummary s;
    names(kStart + "this is not json\n" + kEnd, &s, &error);
    EXPECT_NE(error.find("log.jsonl: corrupt event log, line 2"), std::string::npos) << error;
    EXPECT_NE(error.find("skipped"), std::string::npos);
}

TEST(EventLogReader, LinesOfJsonWhiteSpaceAreBlank) {
    // Found by fuzz_run_directory: a line of carriage returns parsed to no
    // value at all, and the reader then asked for that value's type.
    EventLogSummary s;
    EXPECT_EQ(names("\r\r\n" + kStart + " \r\t\r\n" + kEnd, &s).size(), 2u);
    EXPECT_EQ(s.lines, 2u);
}

TEST(EventLogReader, AFirstEventBeforeTimeZeroIsCorruptAndSaysSo) {
    std::string error;
    std::string start = kStart;
    start.replace(start.find("\"t\":100"), 7, "\"t\":-5");
    EXPECT_TRUE(names(start + kEnd, nullptr, &error).empty());
    EXPECT_NE(error.find("log.jsonl: corrupt event log, line 1: the first event ('process_start') has a negative time (-5)"),
              std::string::npos)
        << error;
    // Later ones are skipped and counted.
    EventLogSummary s;
    std::string thread = kThread;
    thread.replace(thread.find("\"t\":200"), 7, "\"t\":-9");
    EXPECT_EQ(names(kStart + thread + kEnd, &s).size(), 2u);
    EXPECT_EQ(s.negative_time_events, 1u);
}

TEST(EventLogReader, BinaryDataIsCorrupt) {
    std::string error;
    names(kStart + std::string("\x01\x02\0\0\x7f\x03", 6) + "\n" + kEnd, nullptr, &error);
    EXPECT_NE(error.find("binary data"), std::string::npos) << error;
}

// The recorder writes through a file mapping: a process killed before its
// exit leaves the rest of the last chunk zero-filled.
TEST(EventLogReader, ATrailingNulRunIsSkipped) {
    EventLogSummary s;
    EXPECT_EQ(names(kStart + kThread + std::string(4096, '\0'), &s),
              (std::vector<std::string>{"process_start", "thread_start"}));
    EXPECT_FALSE(s.torn_last_line);
    EXPECT_EQ(s.torn_lines, 0u);
}

// Lines other threads were copying when SIGKILL came: a reserved range never
// written (all NULs), one cut after its start, one whose start was not
// copied yet; complete lines after them are kept.
TEST(EventLogReader, TornLinesAmongNulsAreSkippedAndCounted) {
    const std::string never(40, '\0');
    const std::string cut = kThread.substr(0, 30) + std::string(kThread.size() - 30, '\0');
    const std::string tail = std::string(30, '\0') + kThread.substr(30);
    EventLogSummary s;
    std::string error;
    EXPECT_EQ(names(kStart + never + cut + kThread + tail + kEnd + cut + std::string(100, '\0'), &s, &error),
              (std::vector<std::string>{"process_start", "thread_start", "process_end"}))
        << error;
    EXPECT_EQ(s.torn_lines, 3u);
    EXPECT_FALSE(s.torn_last_line);
    EXPECT_EQ(s.events, 3u);
}

TEST(EventLogReader, AWholeLineRightAfterANulRunIsKept) {
    EventLogSummary s;
    EXPECT_EQ(names(kStart + std::string(17, '\0') + kThread + kEnd, &s),
              (std::vector<std::string>{"process_start", "thread_start", "process_end"}));
    EXPECT_EQ(s.torn_lines, 0u);
}

TEST(EventLogReader, AnObjectWithoutTheCommonFieldsIsCorrupt) {
    std::string error;
    names(kStart + "{\"hello\":1}\n" + kEnd, nullptr, &error);
    EXPECT_NE(error.find("not a stacksage event"), std::string::npos) << error;
}

TEST(EventLogReader, AMissingFileIsNamed) {
    auto r = read_event_log("/nonexistent/x.jsonl", [](const EventLogEvent&) {});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("/nonexistent/x.jsonl"), std::string::npos);
}

TEST(ProcessLog, InterpretsThreadsMasksAndEnd) {
    const std::string affinity =
        R"({"v":1,"ev":"affinity","t":300,"pid":7,"tid":8,"api":"sched_setaffinity","target_tid":8,"target_is_caller":true,"target_in_process":true,"cpuset":"2","rc":0})"
        "\n";
    const std::string name = R"({"v":1,"ev":"thread_name","t":310,"pid":7,"tid":8,"target_tid":8,"name":"worker"})" "\n";
    auto r = parse_process_log(kStart + kThread + affinity + name + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    const ProcessImage& p = *r;
    EXPECT_EQ(p.pid, 7);
    EXPECT_EQ(p.rank, 0);
    EXPECT_EQ(p.end_how, "exit");
    EXPECT_TRUE(p.end_known);
    EXPECT_EQ(p.env.size(), 1u);
    ASSERT_EQ(p.threads.size(), 2u);
    EXPECT_TRUE(p.threads[0].is_main);
    EXPECT_EQ(p.threads[0].masks.front().cpuset.to_list_string(), "0-3");
    const ThreadRecord& t = p.threads[1];
    EXPECT_EQ(t.name, "worker");
    EXPECT_EQ(t.creator_module, "/lib/libgomp.so.1");
    ASSERT_EQ(t.masks.size(), 2u);
    EXPECT_EQ(t.masks[1].t, 300);
    EXPECT_EQ(t.masks[1].cpuset.to_list_string(), "2");
    EXPECT_EQ(t.end_t, 1000);  // no thread_end: closed by the process's end
}

// pthread_join waits: kept as recorded, in the order recorded (the run
// view orders and clips them, tests/analysis); a wait whose begin is after
// its end is dropped.
TEST(ProcessLog, JoinWaitsAreKeptAsRecorded) {
    const std::string joins =
        R"({"v":1,"ev":"join","t":900,"pid":7,"tid":7,"api":"pthread_join","target_pthread":"0x7f01","begin_t":400,"cpu_ns":250000,"rc":0})"
        "\n"
        R"({"v":1,"ev":"join","t":350,"pid":7,"tid":7,"api":"pthread_join","target_pthread":"0x7f02","target_tid":8,"begin_t":300,"rc":0})"
        "\n"
        R"({"v":1,"ev":"join","t":380,"pid":7,"tid":7,"api":"pthread_join","target_pthread":"0x7f03","begin_t":390,"rc":0})"
        "\n"
        R"({"v":1,"ev":"join","t":2000,"pid":7,"tid":7,"api":"pthread_join","target_pthread":"0x7f04","begin_t":950,"rc":0})"
        "\n";
    auto r = parse_process_log(kStart + kThread + joins + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    const ThreadRecord& main = r->threads[0];
    ASSERT_TRUE(main.is_main);
    ASSERT_EQ(main.waits.size(), 3u);
    EXPECT_EQ(main.waits[0].begin_t, 400);
    EXPECT_EQ(main.waits[0].end_t, 900);
    EXPECT_EQ(main.waits[0].cpu_ns, 250000);
    EXPECT_EQ(main.waits[0].target_pthread, "0x7f01");
    EXPECT_EQ(main.waits[1].begin_t, 300);
    EXPECT_EQ(main.waits[1].end_t, 350);
    EXPECT_EQ(main.waits[1].target_tid, 8);
    EXPECT_EQ(main.waits[1].cpu_ns, -1);
    EXPECT_EQ(main.waits[2].begin_t, 950);
    EXPECT_EQ(main.waits[2].end_t, 2000);  // past the process's end at 1000: the view clips it
    EXPECT_EQ(r->threads[1].pthread_handle, "");  // kThread carries no handle
    EXPECT_TRUE(r->notes.empty());
}

// A thread never joined (a GNU OpenMP pool) has no thread_end: the exiting
// thread wrote its CPU time, read through the thread's CPU clock.
TEST(ProcessLog, ALiveThreadsUsageAtExitGivesItsCpuTime) {
    const std::string usage =
        R"({"v":1,"ev":"thread_usage_at_exit","t":990,"pid":7,"tid":7,"target_tid":8,"cpu_us":40,"duration_ns":790,"run_delay_ns":12})"
        "\n";
    auto r = parse_process_log(kStart + kThread + usage + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->threads.size(), 2u);
    const ThreadRecord& t = r->threads[1];
    EXPECT_FALSE(t.discovered);
    EXPECT_TRUE(t.cpu_time_at_exit);
    EXPECT_EQ(t.utime_us, 40);
    EXPECT_EQ(t.stime_us, 0);
    EXPECT_EQ(t.run_delay_ns, 12);
    EXPECT_EQ(t.nvcsw, -1);  // the clock says nothing of switches
    EXPECT_EQ(t.end_t, 1000);  // alive to the end
    EXPECT_TRUE(t.end_how.empty());
}

// The thread ended while the process exited and wrote its own thread_end,
// before or after the exiting thread measured it: its own figures win.
TEST(ProcessLog, AThreadsOwnEndWinsOverItsUsageAtExit) {
    const std::string usage =
        R"({"v":1,"ev":"thread_usage_at_exit","t":980,"pid":7,"tid":7,"target_tid":8,"cpu_us":40})" "\n";
    const std::string end =
        R"({"v":1,"ev":"thread_end","t":985,"pid":7,"tid":8,"how":"return","utime_us":30,"stime_us":20,"nvcsw":2,"nivcsw":1})"
        "\n";
    for (const std::string& middle : {usage + end, end + usage}) {
        auto r = parse_process_log(kStart + kThread + middle + kEnd, "log");
        ASSERT_TRUE(r) << r.error().message;
        ASSERT_EQ(r->threads.size(), 2u) << "no thread is invented for the late measure";
        const ThreadRecord& t = r->threads[1];
        EXPECT_FALSE(t.cpu_time_at_exit);
        EXPECT_EQ(t.utime_us, 30);
        EXPECT_EQ(t.stime_us, 20);
        EXPECT_EQ(t.nvcsw, 2);
        EXPECT_EQ(t.end_how, "return");
    }
}

// Hand-edited or damaged measures are ignored; an unknown tid is a thread
// the recorder registered before its log could say so (discovered).
TEST(ProcessLog, ABadUsageAtExitIsIgnored) {
    std::string lines;
    for (const char* fields : {R"("target_tid":8)", R"("target_tid":8,"cpu_us":-5)", R"("target_tid":0,"cpu_us":5)",
                               R"("target_tid":-3,"cpu_us":5)", R"("target_tid":"8","cpu_us":5)", R"("cpu_us":5)"})
        lines += std::string(R"({"v":1,"ev":"thread_usage_at_exit","t":990,"pid":7,"tid":7,)") + fields + "}\n";
    auto r = parse_process_log(kStart + kThread + lines + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->threads.size(), 2u);
    EXPECT_FALSE(r->threads[1].cpu_time_at_exit);
    EXPECT_EQ(r->threads[1].utime_us, -1);
    auto unknown = parse_process_log(
        kStart + R"({"v":1,"ev":"thread_usage_at_exit","t":990,"pid":7,"tid":7,"target_tid":9,"cpu_us":5})" "\n" + kEnd,
        "log");
    ASSERT_TRUE(unknown);
    ASSERT_EQ(unknown->threads.size(), 2u);
    EXPECT_TRUE(unknown->threads[1].discovered);
    EXPECT_EQ(unknown->threads[1].utime_us, 5);
}

TEST(ProcessLog, AKilledProcessEndsAtItsLastEvent) {
    auto r = parse_process_log(kStart + kThread, "log");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->end_known);
    EXPECT_EQ(r->end_how, "unknown");
    EXPECT_EQ(r->end_t, 200);
}

TEST(ProcessLog, AFatalSignalEndsTheProcess) {
    const std::string sig = R"({"v":1,"ev":"signal","t":400,"pid":7,"tid":7,"signal":11,"name":"SIGSEGV","disposition":"default","fatal":true})" "\n";
    auto r = parse_process_log(kStart + kThread + sig, "log");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->end_how, "signal SIGSEGV");
    EXPECT_EQ(r->end_t, 400);
}

TEST(ProcessLog, MpiSnapshotsRevealThreadsAndHiddenMaskChanges) {
    const std::string init =
        R"({"v":1,"ev":"mpi_init","t":300,"pid":7,"tid":7,"api":"MPI_Init","rc":0,"rank":3,"size":4,"threads":[{"tid":7,"name":"app","cpuset":"0"},{"tid":8,"cpuset":"1"},{"tid":9,"name":"async","cpuset":"0-3"}]})"
        "\n";
    auto r = parse_process_log(kStart + kThread + init + kEnd, "log");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->mpi_size, 4);
    EXPECT_EQ(r->mpi_init_t, 300);
    ASSERT_EQ(r->threads.size(), 3u);
    EXPECT_EQ(r->threads[0].masks.back().cpuset.to_list_string(), "0");  // changed behind our back
    EXPECT_TRUE(r->threads[2].discovered);
    EXPECT_EQ(r->threads[2].name, "async");
}

// Recorders before the registry of their own threads listed the sampler's
// drain thread in MPI snapshots, where it looked like an application thread
// of unknown runtime that never stopped running. It is left out; a thread of
// the application discovered the same way stays.
TEST(ProcessLog, TheRecordersDrainThreadInASnapshotIsNotAThread) {
    const std::string init =
        R"({"v":1,"ev":"mpi_init","t":300,"pid":7,"tid":7,"api":"MPI_Init","rc":0,"rank":0,"size":1,"threads":[)"
        R"({"tid":7,"name":"app","cpuset":"0-3"},{"tid":8,"cpuset":"1"},)"
        R"({"tid":9,"name":"stacksage-drain","cpuset":"0-3"},{"tid":10,"name":"async","cpuset":"0-3"}]})"
        "\n";
    const std::string finalize =
        R"({"v":1,"ev":"mpi_finalize","t":900,"pid":7,"tid":7,"api":"MPI_Finalize","rc":0,"threads":[)"
        R"({"tid":7,"name":"app","cpuset":"0-3"},{"tid":9,"name":"stacksage-drain","cpuset":"0-3"}]})"
        "\n";
    auto r = parse_process_log(kStart + kThread + init + finalize + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->threads.size(), 3u);
    for (const ThreadRecord& t : r->threads) EXPECT_NE(t.tid, 9) << t.name;
    EXPECT_EQ(r->threads[2].name, "async");
    EXPECT_TRUE(r->threads[2].discovered);
    EXPECT_TRUE(is_recorder_thread_name("stacksage-drain"));
    EXPECT_FALSE(is_recorder_thread_name("app"));
}

// Only a thread the log merely saw is judged by its name: one the recorder
// saw created is the application's, whatever it is called.
TEST(ProcessLog, AnApplicationThreadNamedLikeTheRecorderStays) {
    const std::string name =
        R"({"v":1,"ev":"thread_name","t":310,"pid":7,"tid":8,"target_tid":8,"name":"stacksage-like"})" "\n";
    auto r = parse_process_log(kStart + kThread + name + kEnd, "log");
    ASSERT_TRUE(r) << r.error().message;
    ASSERT_EQ(r->threads.size(), 2u);
    EXPECT_EQ(r->threads[1].name, "stacksage-like");
}

TEST(ProcessLog, ReadsTheMainThreadsOwnCpuTime) {
    const std::string end =
        R"({"v":1,"ev":"process_end","t":1000,"pid":7,"tid":7,"how":"exit","status":0,"utime_us":500,"stime_us":100,)"
        R"("main_cpu_us":321})"
        "\n";
    auto with = parse_process_log(kStart + kThread + end, "log");
    ASSERT_TRUE(with) << with.error().message;
    EXPECT_EQ(with->main_cpu_us, 321);
    auto without = parse_process_log(kStart + kThread + kEnd, "log");
    ASSERT_TRUE(without);
    EXPECT_EQ(without->main_cpu_us, -1);
}

TEST(ProcessLog, RefusesALogThatDoesNotStartWithProcessStart) {
    auto r = parse_process_log(kThread + kEnd, "log");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("not process_start"), std::string::npos);
}

TEST(ProcessLog, RefusesALogWithOnlyATornLine) {
    auto r = parse_process_log(R"({"v":1,"ev":"process_st)", "log");
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("no complete event"), std::string::npos);
}
