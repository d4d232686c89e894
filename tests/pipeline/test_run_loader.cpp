// Loading recorded runs into one merged model: shape, merging, fallbacks,
// job-restricted topologies, and every kind of broken input.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "analysis/analyzer.hpp"
#include "core/run_model_schema.hpp"
#include "core/snapshot.hpp"
#include "parsers/hwloc_loader.hpp"
#include "parsers/run_census.hpp"
#include "parsers/run_loader.hpp"
#include "reports/perfetto_export.hpp"
#include "reports/text_report.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace fs = std::filesystem;

namespace {

LoadedRun load(const TempDir& dir) {
    Result<LoadedRun> r = load_run(dir.str());
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return std::move(r.value());
}

std::string text_of(const LoadedRun& run, const AnalysisResult& a) {
    ReportData d;
    d.analysis = &a;
    d.notes = &run.notes;
    d.logs = run.stats.logs;
    d.logs_skipped = run.stats.logs_skipped;
    return render_text_report(d);
}

const LoadNote* note_about(const LoadedRun& run, std::string_view file_part, std::string_view message_part) {
    for (const LoadNote& n : run.notes)
        if (n.file.find(file_part) != std::string::npos && n.message.find(message_part) != std::string::npos) return &n;
    return nullptr;
}

std::string data(const std::string& relative) { return std::string(STACKSAGE_TEST_DATA_DIR) + "/" + relative; }

// One process (pid 100: three busy threads on CPUs 0-1 of n01) whose event
// log the test edits before loading it.
struct EditedLogRun {
    TempDir dir;
    SyntheticProcess process = busy_process("n01", 100, -1, 3, "0-1");
    fs::path log;
    std::string text;  // the log; edit, then load()
    EditedLogRun() {
        SyntheticRun run(dir.path());
        run.write_run_json(R"(["./app"])");
        run.add_host("n01", "pack:1 core:2 pu:1");
        log = run.add_process(process);
        text = event_log_text(process);
    }
    // Sets the value of the n-th `field` ("\"t\":") counted from the start, or from the end when n < 0.
    void set(const std::string& field, int n, std::int64_t value) {
        std::size_t at = n >= 0 ? text.find(field) : text.rfind(field);
        for (int i = 0; i < (n >= 0 ? n : -n - 1) && at != std::string::npos; ++i)
            at = n >= 0 ? text.find(field, at + 1) : text.rfind(field, at - 1);
        ASSERT_NE(at, std::string::npos) << field << " #" << n;
        const std::size_t start = at + field.size();
        text.replace(start, text.find(',', start) - start, std::to_string(value));
    }
    LoadedRun load() {
        SyntheticRun::write_file(log, text);
        return ::load(dir);
    }
};

}  // namespace

TEST(RunLoader, BuildsOneModelWithNodesProcessesFlowsAndPaths) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","2","./app"])");
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_host("n02", "pack:1 core:4 pu:1");
    SyntheticProcess a = busy_process("n01", 100, 0, 3, "0-1");
    a.threads[0].affinity = {{5'000'000'000, "1"}};  // the thread binds itself halfway
    run.add_process(a);
    run.add_process(busy_process("n02", 200, 1, 2, "0"));
    SyntheticProcess launcher = busy_process("n01", 50, -1, 1, "0-3");
    launcher.launcher = "mpirun";
    launcher.exe = "/usr/bin/mpirun";
    run.add_process(launcher);
    LoadedRun r = load(dir);
    const Model& m = r.model;
    EXPECT_EQ(r.stats.hosts, 2u);
    EXPECT_EQ(r.stats.logs, 3u);
    EXPECT_EQ(r.stats.processes, 3u);
    EXPECT_EQ(r.stats.flows, 6u);
    EXPECT_EQ(r.stats.topologies_loaded, 1u);  // identical hardware: loaded once, grafted twice
    EXPECT_TRUE(r.notes.empty()) << r.notes.front().message;
    EXPECT_EQ(m.type(r.topology), ComponentType::Topology);
    EXPECT_EQ(*m.get_string(r.topology, *m.find_key(run_keys::run_command)), "mpirun -np 2 ./app");
    const auto nodes = m.children(r.topology);
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(m.name(nodes[0]), "n01");
    EXPECT_EQ(m.name(nodes[1]), "n02");
    EXPECT_EQ(m.descendants_of_type(nodes[1], ComponentType::Thread).size(), 4u);
    const auto processes = m.components_of_type(ComponentType::Process);
    ASSERT_EQ(processes.size(), 3u);
    // Ranks first, then the others; the launcher is marked.
    EXPECT_EQ(*m.get_int(processes[0], *m.find_key(run_keys::rank)), 0);
    EXPECT_EQ(m.kind(processes[1]), to_string(ProcessKind::Launcher));
    const auto flows = m.children(processes[0]);
    ASSERT_EQ(flows.size(), 3u);
    EXPECT_EQ(m.kind(flows[0]), to_string(FlowKind::Main));
    // The bound thread has two intervals: on CPUs 0-1, then on CPU 1 alone.
    std::size_t paths = 0;
    for (DataPathId dp : m.datapaths(flows[1], DataPathType::MayRunOn, Direction::Out)) {
        ++paths;
        EXPECT_TRUE(m.get_int(dp, keys::start_ns));
        EXPECT_EQ(m.name(m.ancestor_of_type(m.target(dp), ComponentType::Node)), "n01");
    }
    EXPECT_EQ(paths, 3u);
    EXPECT_EQ(m.datapaths(flows[1], DataPathType::RanOn, Direction::Out).size(), 1u);
    // The main thread's CPU time is what the process's total leaves.
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::cpu_time_derived)), 1);
    EXPECT_TRUE(m.check_consistency().empty());
}

// An affinity call's caller, call and module reach the view with the
// interval of the mask it set, through the model's MayRunOn paths.
TEST(RunLoader, AnAffinityCallIsKeptWithTheMaskItSet) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    SyntheticProcess a = busy_process("n01", 100, 0, 2, "0-1");
    a.threads[0].affinity = {{5'000'000'000, "1"}};
    a.threads[0].affinity_caller_module = "/opt/app/lib/libbind.so";
    run.add_process(a);
    LoadedRun r = load(dir);
    const RunView v = build_run_view(r.model);
    ASSERT_EQ(v.flows.size(), 2u);
    const FlowView& bound = v.flows[1];
    ASSERT_EQ(bound.intervals.size(), 2u);
    EXPECT_EQ(bound.intervals[0].set_by, "thread_start");
    EXPECT_EQ(bound.intervals[0].cpuset.to_list_string(), "0-1");
    EXPECT_TRUE(bound.intervals[1].set_by_affinity_call());
    EXPECT_EQ(bound.intervals[1].start_ns, 5'000'000'000);
    EXPECT_EQ(bound.intervals[1].cpuset.to_list_string(), "1");
    EXPECT_EQ(bound.intervals[1].api, "sched_setaffinity");
    EXPECT_EQ(bound.intervals[1].caller_tid, bound.tid);
    EXPECT_EQ(bound.intervals[1].caller_module, "/opt/app/lib/libbind.so");
    EXPECT_EQ(v.flows[0].intervals.front().set_by, "process_start");
}

// 32 joined worker threads spinning on 2 cores: each got 6 % of a CPU and
// was preempted, never blocked; the main thread waited in pthread_join. The
// workers are load (the cores are over-subscribed), the main thread is a
// service flow; the cores were not idle.
TEST(RunLoader, StarvedThreadsAreLoadNotServiceFlows) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["./spin","32"])");
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, -1, 33, "0-1");
    p.main_cpu_time_us = 2'000;
    p.main_nvcsw = 32;
    p.main_nivcsw = 1;
    for (SyntheticThread& t : p.threads) {
        t.cpu_time_us = 600'000;  // 6 % of 10 s
        t.nvcsw = 0;
        t.nivcsw = 160;
    }
    run.add_process(p);
    LoadedRun r = load(dir);
    const Model& m = r.model;
    const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
    ASSERT_EQ(flows.size(), 33u);
    // The main thread's switches are what the process's total leaves.
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::nvcsw)), 32);
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::nivcsw)), 1);
    EXPECT_EQ(*m.get_int(flows[1], *m.find_key(run_keys::nivcsw)), 160);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].service_threads, 1u);
    const Finding* overloaded = nullptr;
    for (const Finding& f : a.findings) {
        EXPECT_NE(f.code, FindingCode::IdleResources) << f.message;
        if (f.code == FindingCode::OverloadedResources) overloaded = &f;
    }
    ASSERT_NE(overloaded, nullptr);
    const auto starved = std::find_if(overloaded->figures.begin(), overloaded->figures.end(),
                                      [](const auto& figure) { return figure.first == "starved_threads"; });
    ASSERT_NE(starved, overloaded->figures.end());
    EXPECT_EQ(starved->second, 32);
    EXPECT_NE(overloaded->detail.find("32 of these threads got under a tenth of a CPU"), std::string::npos)
        << overloaded->detail;
    // The trace shows each worker's state.
    std::size_t starved_tracks = 0;
    const nlohmann::json trace = perfetto_trace(a);
    for (const auto& e : trace["traceEvents"])
        if (e["ph"] == "X" && e["args"]["state"] == "starved") ++starved_tracks;
    EXPECT_EQ(starved_tracks, 32u);
}

// 96 busy threads on 2 cores: each preempted about 7 times in its second of
// life and never blocked; the recorder wrote how long each waited for a CPU.
// The waits reach the model (the main thread's from process_end) and make the
// workers load; the main thread, which only waited for them, stays a service
// flow.
TEST(RunLoader, TheWaitForACpuReachesTheModelAndDecides) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["./spin","96"])");
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, -1, 97, "0-1");
    p.end_ns = p.start_ns + 1'000'000'000;
    p.main_cpu_time_us = 3'000;
    p.main_nvcsw = 96;
    p.main_nivcsw = 2;
    p.main_run_delay_ns = 4'000'000;
    for (SyntheticThread& t : p.threads) {
        t.cpu_time_us = 20'000;  // 2 % of a second
        t.nvcsw = 3;             // blocked a little (a page fault, a lock)
        t.nivcsw = 7;
        t.run_delay_ns = 960'000'000;
    }
    run.add_process(p);
    LoadedRun r = load(dir);
    const Model& m = r.model;
    const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
    ASSERT_EQ(flows.size(), 97u);
    const AttrKey waited = *m.find_key(run_keys::run_delay_ns);
    EXPECT_EQ(*m.get_int(flows[0], waited), 4'000'000);
    EXPECT_EQ(*m.get_int(flows[1], waited), 960'000'000);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].service_threads, 1u);
    std::int64_t starved = -1;
    for (const Finding& f : a.findings) {
        EXPECT_NE(f.code, FindingCode::IdleResources) << f.message;
        if (f.code == FindingCode::OverloadedResources)
            for (const auto& [name, value] : f.figures)
                if (name == "starved_threads") starved = value;
    }
    EXPECT_EQ(starved, 96);
}

// A GNU OpenMP team of 4 on 2 cores that computed for 5 % of the run, then
// sat idle while the main thread worked alone: libgomp never joins its
// pool, so the 3 pool threads have no thread_end. Their CPU time, written at
// the process's exit, makes them service flows; the main thread's share is
// then derived from the process's. Without it (logs of older recorders) they
// count as load and the 2 cores look over-subscribed.
TEST(RunLoader, AnIdleOpenMpPoolAliveAtExitIsServiceNotLoad) {
    for (const bool usage_at_exit : {true, false}) {
        SCOPED_TRACE(usage_at_exit ? "usage at exit" : "no usage at exit");
        TempDir dir;
        SyntheticRun run(dir.path());
        run.write_run_json(R"(["./omp"])");
        run.add_host("n01", "pack:1 core:2 pu:1");
        SyntheticProcess p = busy_process("n01", 100, -1, 4, "0-1");  // main + 3 pool threads
        p.end_ns = p.start_ns + 2'000'000'000;
        p.main_cpu_time_us = 1'900'000;
        for (SyntheticThread& t : p.threads) {
            t.write_end = false;
            t.usage_at_exit = usage_at_exit;
            t.cpu_time_us = 100'000;  // 5 % of its life
            t.run_delay_ns = 20'000'000;
        }
        run.add_process(p);
        LoadedRun r = load(dir);
        const Model& m = r.model;
        const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
        ASSERT_EQ(flows.size(), 4u);
        const AttrKey utime = *m.find_key(run_keys::utime_us);
        const AnalysisResult a = analyze(r.model);
        ASSERT_EQ(a.nodes.size(), 1u);
        bool overloaded = false;
        for (const Finding& f : a.findings) overloaded = overloaded || f.code == FindingCode::OverloadedResources;
        if (usage_at_exit) {
            EXPECT_EQ(*m.get_int(flows[1], utime), 100'000);
            EXPECT_EQ(m.get_int(flows[1], *m.find_key(run_keys::cpu_time_at_exit)), 1);
            EXPECT_EQ(*m.get_int(flows[0], utime), 1'900'000);  // the main thread's, derived
            EXPECT_EQ(a.nodes[0].service_threads, 3u);
            EXPECT_FALSE(overloaded);
        } else {
            EXPECT_FALSE(m.get_int(flows[1], utime));
            EXPECT_EQ(a.nodes[0].service_threads, 0u);
            EXPECT_TRUE(overloaded);
        }
    }
}

// One rank with two busy threads on 2 cores, sampled by a recorder that
// still listed its drain thread in the MPI_Init snapshot (issue 17): the
// drain thread is no flow, the cores are not over-subscribed, and the main
// thread's CPU time stays known.
TEST(RunLoader, TheRecordersDrainThreadIsNoFlow) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["mpirun","-np","1","./app"])");
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 2, "0-1");
    p.mpi = true;
    p.main_cpu_time_us = 9'000'000;
    std::string text = event_log_text(p);
    const std::string empty = R"("api":"MPI_Init","rc":0,"rank":0,"size":2,"thread_level":0,"threads":[])";
    const std::size_t at = text.find(empty);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, empty.size(),
                 R"("api":"MPI_Init","rc":0,"rank":0,"size":1,"thread_level":0,"threads":[)"
                 R"({"tid":100,"name":"app","cpuset":"0-1"},{"tid":10001,"name":"app","cpuset":"0-1"},)"
                 R"({"tid":101,"name":"stacksage-drain","cpuset":"0-1"}])");
    SyntheticRun::write_file(run.add_process(p), text);
    LoadedRun r = load(dir);
    const Model& m = r.model;
    const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
    ASSERT_EQ(flows.size(), 2u);
    for (ComponentId f : flows) EXPECT_NE(m.name(f).rfind("stacksage", 0), 0u) << m.name(f);
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::utime_us)), 9'000'000);
    const AnalysisResult a = analyze(r.model);
    for (const Finding& f : a.findings) EXPECT_NE(f.code, FindingCode::OverloadedResources) << f.message;
}

// pthread_join waits become WaitedFor paths to the thread waited for (by
// its tid, or by its pthread handle when it had ended before the wait), and
// the main thread that waits for its 2 workers is not load beside them.
TEST(RunLoader, JoinWaitsBecomeWaitedForPathsAndAreNotLoad) {
    for (const bool joins : {true, false}) {
        SCOPED_TRACE(joins ? "with its joins" : "without");
        TempDir dir;
        SyntheticRun run(dir.path());
        run.write_run_json(R"(["./app"])");
        run.add_host("n01", "pack:1 core:2 pu:1");
        // The main thread computes alone from 1 s to 3 s, then 2 workers until 11 s.
        SyntheticProcess p = busy_process("n01", 100, -1, 3, "0-1");
        p.main_cpu_time_us = 2'000'000;
        for (SyntheticThread& t : p.threads) t.start_ns = 3'000'000'000;
        std::string text = event_log_text(p);
        if (joins) {
            const std::size_t at = text.find("{\"v\":1,\"ev\":\"process_end\"");
            ASSERT_NE(at, std::string::npos);
            const std::string handle = fmt::format("0x7f{:x}", p.threads[0].tid);
            text.insert(at, R"({"v":1,"ev":"join","t":10999000000,"pid":100,"tid":100,"api":"pthread_join",)"
                            R"("target_pthread":")" + handle + R"(","begin_t":3000500000,"cpu_ns":2000000000,"rc":0})"
                            "\n"
                            R"({"v":1,"ev":"join","t":10999500000,"pid":100,"tid":100,"api":"pthread_join",)"
                            R"("target_pthread":"0x1","target_tid":)" + std::to_string(p.threads[1].tid) +
                            R"(,"begin_t":10999000000,"rc":0})"
                            "\n");
        }
        SyntheticRun::write_file(run.add_process(p), text);
        LoadedRun r = load(dir);
        const Model& m = r.model;
        const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
        ASSERT_EQ(flows.size(), 3u);
        const AnalysisResult a = analyze(r.model);
        bool overloaded = false;
        for (const Finding& f : a.findings) overloaded = overloaded || f.code == FindingCode::OverloadedResources;
        if (!joins) {
            EXPECT_TRUE(overloaded) << "the main thread looks busy all along: " << text_of(r, a);
            continue;
        }
        const auto type = m.find_datapath_type(run_keys::waited_for);
        ASSERT_TRUE(type);
        std::vector<std::int64_t> targets;
        for (DataPathId dp : m.datapaths(flows[0], *type, Direction::Out)) targets.push_back(m.os_index(m.target(dp)));
        std::sort(targets.begin(), targets.end());
        EXPECT_EQ(targets, (std::vector<std::int64_t>{p.threads[0].tid, p.threads[1].tid}));
        EXPECT_FALSE(overloaded) << text_of(r, a);
        EXPECT_EQ(a.count(Severity::Warning), 0u) << text_of(r, a);
    }
}

// A thread only seen in a snapshot has no CPU time: the main thread's, the
// process's total less the other threads', stays known (it then includes the
// unseen thread's). A recorder that read the main thread's own clock
// (main_cpu_us) gives it exactly, not derived.
TEST(RunLoader, TheMainThreadsCpuTimeSurvivesADiscoveredThread) {
    for (const bool own_clock : {false, true}) {
        SCOPED_TRACE(own_clock ? "main_cpu_us" : "derived");
        EditedLogRun e;
        const std::string end = R"("ev":"process_end")";
        const std::size_t at = e.text.find(std::string("{\"v\":1,") + end);
        ASSERT_NE(at, std::string::npos);
        e.text.insert(at, R"({"v":1,"ev":"mpi_init","t":1002000000,"pid":100,"tid":100,"api":"MPI_Init","rc":0,)"
                          R"("rank":0,"size":1,"threads":[{"tid":100,"cpuset":"0-1"},{"tid":555,"name":"helper"}]})"
                          "\n");
        if (own_clock) {
            const std::size_t created = e.text.find(R"("threads_created")");
            ASSERT_NE(created, std::string::npos);
            e.text.insert(created, R"("main_cpu_us":1234,)");
        }
        LoadedRun r = e.load();
        const Model& m = r.model;
        const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
        ASSERT_EQ(flows.size(), 4u);  // main, 2 threads, the discovered helper
        EXPECT_EQ(m.kind(flows[3]), to_string(FlowKind::Discovered));
        const auto main_cpu = m.get_int(flows[0], *m.find_key(run_keys::utime_us));
        ASSERT_TRUE(main_cpu);
        const auto derived = m.get_int(flows[0], *m.find_key(run_keys::cpu_time_derived));
        if (own_clock) {
            EXPECT_EQ(*main_cpu, 1234);
            EXPECT_FALSE(derived);
        } else {
            EXPECT_EQ(*main_cpu, 10'000'000);  // busy_process: busy the whole 10 s
            EXPECT_EQ(derived, 1);
        }
    }
}

// CPU times and switch counts are whatever a log says, up to INT64_MAX: the
// sums that derive the main thread's share saturate instead of overflowing
// (UBSan stops the sanitizer build on a signed overflow).
TEST(BrokenInputs, HugeCpuTimesAndSwitchCountsSaturate) {
    EditedLogRun run;
    const auto max = std::numeric_limits<std::int64_t>::max();
    for (const char* field : {"\"utime_us\":", "\"stime_us\":", "\"nvcsw\":", "\"nivcsw\":"})
        for (int n = 0; n < 3; ++n) run.set(field, n, max);  // both threads' ends and the process's
    LoadedRun r = run.load();
    const Model& m = r.model;
    const auto flows = m.children(m.components_of_type(ComponentType::Process).front());
    ASSERT_EQ(flows.size(), 3u);
    // The others account for the process's whole (saturated) totals.
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::utime_us)), 0);
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::nvcsw)), 0);
    EXPECT_EQ(*m.get_int(flows[0], *m.find_key(run_keys::nivcsw)), 0);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].service_threads, 1u);  // the main thread, with no CPU time left to it
}

// Event times are whatever a log says too. An event before time 0 (here the
// second, at INT64_MIN) is skipped with a warning: the recorder writes
// monotonic nanoseconds. From 0 to INT64_MAX (here the process's end),
// lifetimes and intervals cannot overflow.
TEST(BrokenInputs, EventTimesAtTheEndsOfTheRangeDoNotOverflow) {
    EditedLogRun run;
    run.set("\"t\":", 1, std::numeric_limits<std::int64_t>::min());
    run.set("\"t\":", -1, std::numeric_limits<std::int64_t>::max());
    LoadedRun r = run.load();
    EXPECT_EQ(r.stats.processes, 1u);
    const LoadNote* n = note_about(r, "n01/pid-100.jsonl", "1 event(s) with a negative time");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->level, LoadNote::Level::Warning);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_NE(text_of(r, a).find("1 event(s) with a negative time"), std::string::npos);
}

// A host whose processes published topology.snap is mapped from it: no XML
// parsed; the answer is the same as from the XML.
TEST(RunLoader, MapsTheNodeSnapshotInsteadOfParsingTheXml) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json(R"(["./app"])");
    run.add_host("n01", "pack:2 core:4 pu:2");
    run.add_process(busy_process("n01", 100, 0, 2, "0-3"));
    LoadedRun from_xml = load(dir);
    ASSERT_EQ(from_xml.stats.topologies_loaded, 1u);
    auto topology = load_hwloc_xml((dir.path() / "n01" / "topology.xml").string());
    ASSERT_TRUE(topology) << topology.error().message;
    ASSERT_TRUE(write_snapshot(*topology, (dir.path() / "n01" / "topology.snap").string()));
    LoadedRun from_snapshot = load(dir);
    EXPECT_EQ(from_snapshot.stats.snapshots_mapped, 1u);
    EXPECT_EQ(from_snapshot.stats.topologies_loaded, 0u);
    EXPECT_TRUE(from_snapshot.notes.empty()) << from_snapshot.notes.front().message;
    const auto& a = from_xml.model;
    const auto& b = from_snapshot.model;
    EXPECT_EQ(a.count_of_type(ComponentType::Thread), b.count_of_type(ComponentType::Thread));
    EXPECT_EQ(a.count_of_type(ComponentType::Core), b.count_of_type(ComponentType::Core));
    EXPECT_EQ(a.datapath_count(), b.datapath_count());
    EXPECT_EQ(b.name(b.children(from_snapshot.topology).front()), "n01");
    EXPECT_TRUE(b.check_consistency().empty());
}

TEST(RunLoader, MergesTheImagesOfOneProcessAcrossExec) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:4 pu:1");
    // The launcher's fork child (pid-300.jsonl), then the exec'ed rank
    // (rank-0000.pid-300.jsonl), bound by then.
    SyntheticProcess child = busy_process("n01", 300, -1, 1, "0-3");
    child.launcher = "mpirun";
    child.start_ns = 1'000'000'000;
    child.end_ns = 1'001'000'000;
    child.write_end = false;
    fs::create_directories(dir.path() / "n01");
    SyntheticRun::write_file(dir.path() / "n01" / "pid-300.jsonl", event_log_text(child));
    SyntheticProcess rank = busy_process("n01", 300, 0, 2, "2");
    rank.start_ns = 1'002'000'000;
    run.add_process(rank);
    LoadedRun r = load(dir);
    const auto processes = r.model.components_of_type(ComponentType::Process);
    ASSERT_EQ(processes.size(), 1u);
    EXPECT_EQ(r.model.kind(processes[0]), to_string(ProcessKind::Process));  // the last image decides
    const RunView v = build_run_view(r.model);
    ASSERT_EQ(v.flows.size(), 2u);
    EXPECT_EQ(v.flows[0].placement.to_list_string(), "2");  // held longest
    EXPECT_EQ(v.flows[0].intervals.size(), 2u);
    // The creating module survives the images being reordered and copied.
    EXPECT_EQ(v.runtime_of(v.flows[1]).name, "GNU OpenMP");
}

TEST(RunLoader, JobRestrictedSyntheticTopology) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:2 core:8 pu:1", "0-3");  // the cgroup gave 4 of 16 CPUs
    run.add_process(busy_process("n01", 100, 0, 2, "0-1"));
    LoadedRun r = load(dir);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].cores_available, 4u);
    EXPECT_EQ(a.nodes[0].cpus_total, 16u);
    EXPECT_TRUE(a.nodes[0].job_restricted);
    const std::string text = text_of(r, a);
    EXPECT_NE(text.find("+ Node n01: 4 cores available (job-restricted: 4 of the node's 16 cpus), 1 process created."),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("Cores [2-3] may stay idle"), std::string::npos) << text;  // not 2-15
}

// Real topologies of cluster nodes taken inside Slurm jobs: only the allowed
// CPUs are available.
TEST(RunLoader, JobRestrictedRealTopologies) {
    struct Case {
        const char* file;
        const char* host;
        std::size_t cores, cpus_total;
        const char* allowed;
    };
    for (const Case& c : {Case{"network/hwloc-netloc-plafrim2/hwloc/miriel032.xml", "miriel032", 1, 24, "0"},
                          Case{"network/hwloc-netloc-plafrim/hwloc/fourmi001.xml", "fourmi001", 8, 16, "0-7"},
                          Case{"network/hwloc-netloc-avakas/hwloc/node216.xml", "node216", 12, 24, "0-11"}}) {
        TempDir dir;
        SyntheticRun run(dir.path());
        run.copy_topology(c.host, data(c.file));
        run.add_process(busy_process(c.host, 100, 0, 1, "0"));
        LoadedRun r = load(dir);
        const AnalysisResult a = analyze(r.model);
        ASSERT_EQ(a.nodes.size(), 1u) << c.file;
        EXPECT_EQ(a.nodes[0].cores_available, c.cores) << c.file;
        EXPECT_EQ(a.nodes[0].cpus_total, c.cpus_total) << c.file;
        EXPECT_EQ(a.nodes[0].available.to_list_string(), c.allowed) << c.file;
        EXPECT_TRUE(a.nodes[0].job_restricted) << c.file;
        // Idle cores are only ever allowed ones.
        for (const Finding& f : a.findings)
            if (f.code == FindingCode::IdleResources) {
                EXPECT_TRUE(f.resources.is_subset_of(a.nodes[0].available)) << c.file;
            }
        if (c.cores == 1) {
            EXPECT_EQ(a.count(Severity::Warning), 0u) << c.file;
        }
    }
}

// ---- broken inputs: each gives its message, the rest is still reported -------------

TEST(BrokenInputs, ATornLastLineIsNotedAndTheEventsBeforeItCount) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 2, "0-1");
    p.write_end = false;
    std::string text = event_log_text(p) + R"({"v":1,"ev":"thread_end","t":5000,"pid":100,"ti)";
    fs::create_directories(dir.path() / "n01");
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0000.pid-100.jsonl", text);
    LoadedRun r = load(dir);
    EXPECT_EQ(r.stats.flows, 2u);
    EXPECT_NE(note_about(r, "rank-0000.pid-100.jsonl", "last line is torn"), nullptr);
}

TEST(BrokenInputs, UnknownEventsFromANewerVersionAreSkippedAndNamed) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 1, "0-1");
    std::string text = event_log_text(p);
    text.insert(text.find('\n') + 1, R"({"v":2,"ev":"gpu_launch","t":2000000000,"pid":100,"tid":100,"kernel":"k"})" "\n");
    fs::create_directories(dir.path() / "n01");
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0000.pid-100.jsonl", text);
    LoadedRun r = load(dir);
    EXPECT_EQ(r.stats.processes, 1u);
    EXPECT_NE(note_about(r, "pid-100", "gpu_launch (1)"), nullptr);
    EXPECT_NE(note_about(r, "pid-100", "event-log schema 2"), nullptr);
}

TEST(BrokenInputs, ACorruptFileIsNamedInOneErrorAndSkipped) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.write_run_json();
    run.add_host("n01", "pack:1 core:4 pu:1");
    run.add_process(busy_process("n01", 100, 0, 1, "0"));
    fs::create_directories(dir.path() / "n01");
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0001.pid-101.jsonl",
                             std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0\n{}\n", 16));
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0002.pid-102.jsonl", "garbage\nmore garbage\n");
    LoadedRun r = load(dir);
    EXPECT_EQ(r.stats.logs, 3u);
    EXPECT_EQ(r.stats.logs_skipped, 2u);
    EXPECT_EQ(r.stats.processes, 1u);
    const LoadNote* n = note_about(r, "rank-0002.pid-102.jsonl", "corrupt event log, line 1");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_EQ(n->file, "n01/rank-0002.pid-102.jsonl");
    const AnalysisResult a = analyze(r.model);
    const std::string text = text_of(r, a);
    EXPECT_NE(text.find("## ERROR ## n01/rank-0002.pid-102.jsonl: corrupt event log, line 1"), std::string::npos) << text;
    EXPECT_NE(text.find("2 of 3 event logs skipped; the rest is analysed."), std::string::npos) << text;
    EXPECT_NE(text.find("Rank 0 (pid 100) created no threads (only the main thread) on cpu(s) [0]"), std::string::npos) << text;
    EXPECT_NE(text.find("Cores [1-3] may stay idle"), std::string::npos) << text;
}

TEST(BrokenInputs, AHostWithoutTopologyFallsBackToTheCpusetsSeen) {
    TempDir dir;
    SyntheticRun run(dir.path());
    SyntheticProcess p = busy_process("n07", 100, 0, 1, "0");
    p.cgroup_cpuset = "0-5";
    p.online_cpus = "0-7";
    run.add_process(p);
    LoadedRun r = load(dir);
    ASSERT_NE(note_about(r, "n07/topology.xml", "missing"), nullptr);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.nodes.size(), 1u);
    EXPECT_EQ(a.nodes[0].topology_source, TopologySource::CpusetsSeen);
    EXPECT_EQ(a.nodes[0].cores_available, 6u);
    EXPECT_EQ(a.nodes[0].cpus_total, 8u);
    const std::string text = text_of(r, a);
    EXPECT_NE(text.find("(no topology file: rebuilt from the cpusets seen)"), std::string::npos) << text;
    EXPECT_NE(text.find("Cores [1-5] may stay idle"), std::string::npos) << text;
}

// A mask naming CPUs the host's topology lacks (a topology written inside a
// narrower cgroup than the job's threads later saw): one warning about the
// host, naming its directory and the CPUs left out; the rest is analysed.
// (The run-directory fuzzer found this note's file to be the host directory,
// not a file: the property it checks now allows both.)
TEST(BrokenInputs, MasksOutsideTheTopologyAreNotedOnceForTheHost) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:4 pu:1", "0-3");
    run.add_process(busy_process("n01", 100, 0, 2, "0-1"));
    run.add_process(busy_process("n01", 101, 1, 2, "6-9"));
    LoadedRun r = load(dir);
    const LoadNote* n = note_about(r, "n01", "name CPUs [6-9] that its topology does not list as available");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->file, "n01");
    EXPECT_EQ(n->level, LoadNote::Level::Warning);
    std::size_t about_masks = 0;
    for (const LoadNote& note : r.notes) about_masks += note.message.find("does not list as available") != std::string::npos;
    EXPECT_EQ(about_masks, 1u);
    EXPECT_EQ(r.stats.processes, 2u);
    EXPECT_TRUE(r.model.check_consistency().empty());
}

TEST(BrokenInputs, AnUnreadableTopologyFallsBackToo) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.set_topology_text("n01", "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n  <object type=\"Machine\"");
    run.add_process(busy_process("n01", 100, 0, 2, "0-1"));
    LoadedRun r = load(dir);
    const LoadNote* n = note_about(r, "n01/topology.xml", "rebuilt from the cpusets");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_EQ(r.stats.processes, 1u);
}

TEST(BrokenInputs, MissingOrCorruptRunJsonIsNoted) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    run.add_process(busy_process("n01", 100, 0, 2, "0-1"));
    {
        LoadedRun r = load(dir);
        EXPECT_NE(note_about(r, "run.json", "missing"), nullptr);
    }
    SyntheticRun::write_file(dir.path() / "run.json", "{\"schema\": \"stacksage-run\", \"comm");
    LoadedRun r = load(dir);
    EXPECT_NE(note_about(r, "run.json", "not a JSON object"), nullptr);
    EXPECT_EQ(r.stats.processes, 1u);
}

TEST(BrokenInputs, AKilledProcessIsStillAnalysed) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 3, "0-1");
    p.write_end = false;
    for (auto& t : p.threads) t.write_end = false;
    run.add_process(p);
    LoadedRun r = load(dir);
    const AnalysisResult a = analyze(r.model);
    ASSERT_EQ(a.processes.size(), 1u);
    EXPECT_EQ(a.processes[0].end_how, "unknown");
    EXPECT_EQ(a.processes[0].threads, 3u);
    // Their CPU time is unknown: they count as active, 3 threads on 2 cores.
    EXPECT_EQ(a.count(Severity::Warning), 1u);
}

TEST(BrokenInputs, ADirectoryThatIsNotARunCannotBeAnalysed) {
    TempDir dir;
    auto r = load_run(dir.str());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("holds no event logs"), std::string::npos);
    auto missing = load_run(dir.str() + "/nope");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("no such directory"), std::string::npos);
    SyntheticRun::write_file(dir.path() / "file", "x");
    auto file = load_run((dir.path() / "file").string());
    ASSERT_FALSE(file);
    EXPECT_NE(file.error().message.find("not a directory"), std::string::npos);
}

// `stacksage run`'s closing line counts processes as the loader groups
// them: mpirun's fork of a rank before it exec'ed shares the rank's pid and
// is no process of its own; a launcher is counted apart.
TEST(RunCensus, CountsProcessesRanksLaunchersAndPreExecImages) {
    TempDir dir;
    const fs::path host = dir.path() / "n01";
    fs::create_directories(host);
    const auto start = [](int t, int pid, const std::string& rank, const std::string& launcher, const std::string& exe) {
        return "{\"v\":1,\"ev\":\"process_start\",\"t\":" + std::to_string(t) + ",\"pid\":" + std::to_string(pid) +
               ",\"rank\":" + rank + ",\"launcher\":" + launcher + ",\"exe\":\"" + exe + "\"}\n";
    };
    SyntheticRun::write_file(host / "pid-10.jsonl", start(1, 10, "null", "\"orterun\"", "/usr/bin/orterun"));
    SyntheticRun::write_file(host / "pid-11.jsonl", start(5, 11, "null", "\"orterun\"", "/usr/bin/orterun"));
    SyntheticRun::write_file(host / "rank-0000.pid-11.jsonl", start(6, 11, "0", "null", "/opt/app"));
    SyntheticRun::write_file(host / "rank-0000.pid-11.samples.jsonl", "{}\n");  // not an event log
    SyntheticRun::write_file(host / "pid-12.jsonl", "not json\n");
    const auto census = take_run_census(dir.str());
    ASSERT_TRUE(census.ok()) << census.error().message;
    EXPECT_EQ(census->hosts, 1u);
    EXPECT_EQ(census->logs, 4u);
    EXPECT_EQ(census->processes, 2u) << "rank 0 and the process of the unreadable log";
    EXPECT_EQ(census->ranks, (std::vector<std::int64_t>{0}));
    EXPECT_EQ(census->launchers, 1u);
    EXPECT_EQ(census->pre_exec_images, 1u);
    EXPECT_EQ(census->pre_exec_names, (std::vector<std::string>{"orterun"}));
    EXPECT_EQ(census->unreadable, 1u);
    EXPECT_FALSE(take_run_census((dir.path() / "missing").string()).ok());
}
