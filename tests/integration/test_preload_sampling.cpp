// `stacksage run --sample=...` end to end: the real preload opens the
// samplers in every thread from its trampoline and writes the sampling
// summary next to the event log at exit (docs/sample-file.md).
#include <gtest/gtest.h>

#include <sstream>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <string>

#include "core/formats/sample_summary_schema.hpp"
#include "parsers/node_file_reader.hpp"
#include "tests/integration/traced_run.hpp"

namespace stacksage::testing {
namespace {

// Every page fault, and rings (512 KiB) that hold a whole test's faults,
// so that a busy machine delaying the drain thread loses nothing.
const std::map<std::string, std::string> kEveryFault = {{"STACKSAGE_SAMPLE_PERIOD_PAGEFAULT", "1"},
                                                        {"STACKSAGE_SAMPLE_PAGES", "128"}};

RunResult sampled_run(const TempDir& out, const std::string& sample, std::vector<std::string> command,
                      std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "--sample=" + sample, "-o", out.path().string(), "--"};
    for (auto& c : command) o.argv.push_back(c);
    o.preload = false;
    o.env = std::move(env);
    return run(o);
}

// The one process's event stream and its summary, the stream of the node's
// node.samples linked to it.
struct Recorded {
    fs::path log, summary;
    std::vector<nlohmann::json> events, records;
};

Recorded recorded(const TempDir& out) {
    Recorded r;
    namespace nf = stacksage::formats::node_file;
    const auto lines = [](std::string_view text, std::vector<nlohmann::json>& into) {
        std::istringstream in{std::string(text)};
        for (std::string line; std::getline(in, line);) into.push_back(nlohmann::json::parse(line));
    };
    for (const auto& host : fs::directory_iterator(out.path())) {
        if (!host.is_directory()) continue;
        const fs::path events = host.path() / "node.events", samples = host.path() / "node.samples";
        auto log = stacksage::read_node_file(events.string(), "node.events", nf::FileKind::events);
        if (!log || log->streams.empty()) continue;
        r.log = events;
        lines(log->streams.front().text, r.events);
        auto summary = stacksage::read_node_file(samples.string(), "node.samples", nf::FileKind::samples);
        if (!summary) continue;
        for (const auto& s : summary->streams)
            if (s.of_stream == log->streams.front().stream) {
                r.summary = samples;
                lines(s.text, r.records);
            }
    }
    return r;
}

std::map<std::int64_t, std::uint64_t> page_faults_by_thread(const Recorded& r) {
    std::map<std::int64_t, std::uint64_t> out;
    for (const auto& rec : r.records)
        if (rec["rec"] == "access" && rec["backend"] == "pagefault")
            out[rec["tid"].get<std::int64_t>()] += rec["count"].get<std::uint64_t>();
    return out;
}

std::vector<std::int64_t> worker_tids(const Recorded& r) {
    std::vector<std::int64_t> tids;
    for (const auto& e : r.events)
        if (e["ev"] == "thread_start") tids.push_back(e["tid"].get<std::int64_t>());
    return tids;
}

}  // namespace

TEST(PreloadSampling, SerialFirstTouchShowsInThePageFaultsOfTheFirstThread) {
    TempDir out;
    // Every fault (period 1): 32 MiB are 8192 pages.
    RunResult res = sampled_run(out, "pagefault,cpuclock",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "32"},
                                kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    EXPECT_NE(res.err.find("stacksage run: sampling on"), std::string::npos) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.summary.empty()) << "no sampling summary next to " << r.log;
    ASSERT_FALSE(r.events.empty());
    bool started = false, written = false;
    for (const auto& e : r.events) {
        if (e["ev"] == "sampling") started = e["started"].get<bool>();
        if (e["ev"] == "samples") written = e["ok"].get<bool>() && e["file"] == r.summary.filename().string();
    }
    EXPECT_TRUE(started);
    EXPECT_TRUE(written);
    ASSERT_EQ(r.records.front()["rec"], "sampling");
    EXPECT_EQ(r.records.back()["rec"], "end");

    const std::vector<std::int64_t> workers = worker_tids(r);
    ASSERT_EQ(workers.size(), 2u);
    const auto faults = page_faults_by_thread(r);
    // Thread 0 initialises all 8192 pages; thread 1 only reads. Samples a
    // ring could not hold would be counted as lost, never silently dropped.
    std::map<std::int64_t, std::uint64_t> lost;
    for (const auto& rec : r.records)
        if (rec["rec"] == "thread") lost[rec["tid"].get<std::int64_t>()] = rec["lost"].get<std::uint64_t>();
    std::int64_t toucher = workers[0], reader = workers[1];
    if (faults.count(reader) && (!faults.count(toucher) || faults.at(reader) > faults.at(toucher)))
        std::swap(toucher, reader);  // start order need not be creation order
    EXPECT_GE(faults.at(toucher) + lost[toucher], 8192u);
    EXPECT_GE(faults.at(toucher), 8192u * 95 / 100);
    EXPECT_LT(faults.count(reader) ? faults.at(reader) : 0, 200u) << "a reader faults only on its own stack";
    std::uint64_t ran_on = 0;
    for (const auto& rec : r.records)
        if (rec["rec"] == "ran_on") ran_on += rec["count"].get<std::uint64_t>();
    EXPECT_GT(ran_on, 0u) << "cpu-clock samples say where threads ran";
}

TEST(PreloadSampling, ParallelFirstTouchSpreadsThePageFaults) {
    TempDir out;
    RunResult res = sampled_run(out, "pagefault",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "32", "--parallel-init"},
                                kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    const std::vector<std::int64_t> workers = worker_tids(r);
    ASSERT_EQ(workers.size(), 2u);
    const auto faults = page_faults_by_thread(r);
    std::map<std::int64_t, std::uint64_t> lost;
    for (const auto& rec : r.records)
        if (rec["rec"] == "thread") lost[rec["tid"].get<std::int64_t>()] = rec["lost"].get<std::uint64_t>();
    for (std::int64_t tid : workers) {
        ASSERT_TRUE(faults.count(tid)) << tid;
        EXPECT_GE(faults.at(tid) + lost[tid], 4096u) << "each thread first-touches its half";
        EXPECT_GE(faults.at(tid), 4096u * 95 / 100);
    }
}

TEST(PreloadSampling, OffWritesNothingAndBadListsAreRefused) {
    TempDir out;
    RunResult res = sampled_run(out, "off", {example("memory_first_touch"), "--mib", "4"},
                                {{"STACKSAGE_SAMPLE", "pagefault"}});  // an outer setting must not win
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    EXPECT_TRUE(r.summary.empty());
    for (const auto& e : r.events) EXPECT_NE(e["ev"], "sampling");

    TempDir out2;
    RunResult bad = sampled_run(out2, "pebs,nope", {"/bin/true"});
    EXPECT_EQ(bad.exit_code(), 2);
    EXPECT_NE(bad.err.find("--sample: unknown backend 'nope'"), std::string::npos) << bad.err;
}

TEST(PreloadSampling, UnavailableBackendsAreExplainedAndTheRunGoesOn) {
    TempDir out;
    RunResult res = sampled_run(out, "auto", {example("memory_first_touch"), "--mib", "8"});
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.summary.empty());
    int backends = 0;
    for (const auto& rec : r.records) {
        if (rec["rec"] != "backend") continue;
        ++backends;
        if (!rec["available"].get<bool>()) {
            const std::string reason = rec["reason"];
            EXPECT_GT(reason.size(), 20u) << rec.dump();
            // The same reason reached the user before the run.
            EXPECT_NE(res.err.find(reason), std::string::npos) << reason << "\n" << res.err;
        }
    }
    EXPECT_EQ(backends, 5);
}

// A program whose main thread leaves through pthread_exit ends when its
// last thread does: glibc calls exit(0) in the last thread it knows of. The
// sampler's drain thread is one of them, and it kept such a process alive
// for ever, a zombie main thread and the drain thread polling (found with
// examples/thread_exit under --sample=auto). Now the drain thread ends once
// only the recorder's threads are left, and glibc's exit(0) in it ends the
// process, with everything recorded.
TEST(PreloadSampling, AProgramWhoseMainThreadCallsPthreadExitStillEnds) {
    TempDir out;
    RunOptions o;
    o.argv = {stacksage_binary(), "run", "--sample=pagefault,cpuclock", "-o", out.path().string(), "--",
              example("thread_exit")};
    o.preload = false;
    o.timeout = std::chrono::seconds(20);
    const auto start = std::chrono::steady_clock::now();
    RunResult res = run(o);
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    EXPECT_LT(took, std::chrono::seconds(10));
    EXPECT_NE(res.out.find("thread_exit: last thread done"), std::string::npos) << res.out;
    const Recorded r = recorded(out);
    bool sampling = false, process_end = false, model = false;
    for (const auto& e : r.events) {
        sampling = sampling || e["ev"] == "sampling";
        model = model || e["ev"] == "model";
        if (e["ev"] == "process_end") {
            process_end = true;
            EXPECT_EQ(e["status"], 0) << e.dump();
        }
    }
    EXPECT_TRUE(sampling);
    EXPECT_TRUE(process_end);
    EXPECT_TRUE(model);
    EXPECT_FALSE(r.summary.empty());
    // The drain thread is the recorder's: the report counts the application's threads only.
    RunOptions report;
    report.argv = {stacksage_binary(), "report", "--color", "never", out.path().string()};
    report.preload = false;
    RunResult text = run(report);
    ASSERT_EQ(text.exit_code(), 0) << text.err;
    EXPECT_NE(text.out.find("created 3 threads (4 with the main thread"), std::string::npos) << text.out;
    EXPECT_EQ(text.out.find("stacksage-drain"), std::string::npos) << text.out;
}

// The summary a real run writes holds exactly the schema's records and
// fields (core/formats/sample_summary_schema.hpp), which its reader reads by
// the same names: a field renamed on one side only fails here.
TEST(PreloadSampling, EveryRecordOfARealSummaryHasTheSchemasFields) {
    namespace ss = sample_summary_schema;
    TempDir out;
    RunResult res = sampled_run(out, "pagefault,cpuclock",
                                {example("memory_first_touch"), "--threads", "2", "--mib", "8"}, kEveryFault);
    ASSERT_EQ(res.exit_code(), 0) << res.err;
    const Recorded r = recorded(out);
    ASSERT_FALSE(r.records.empty()) << "no sampling summary next to " << r.log;
    const std::map<std::string, std::span<const std::string_view>> schema = {
        {ss::sampling::rec, ss::sampling::fields}, {ss::backend::rec, ss::backend::fields},
        {ss::thread::rec, ss::thread::fields},     {ss::ran_on::rec, ss::ran_on::fields},
        {ss::access::rec, ss::access::fields},     {ss::papi::rec, ss::papi::fields},
        {ss::end::rec, ss::end::fields}};
    const auto keys_of = [](const nlohmann::json& object) {
        std::set<std::string> keys;
        for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
        return keys;
    };
    const auto names = [](std::span<const std::string_view> fields) {
        return std::set<std::string>(fields.begin(), fields.end());
    };
    std::set<std::string> seen;
    for (const nlohmann::json& record : r.records) {
        ASSERT_EQ(record[ss::common::v], ss::kVersion) << record;
        const std::string rec = record[ss::common::rec];
        ASSERT_TRUE(schema.count(rec)) << "a record the schema lacks: " << record;
        seen.insert(rec);
        std::set<std::string> want = names(schema.at(rec));
        for (std::string_view c : ss::common::fields) want.insert(std::string(c));
        EXPECT_EQ(keys_of(record), want) << record;
        if (rec == ss::sampling::rec) {
            EXPECT_EQ(keys_of(record[ss::sampling::periods]), names(ss::sampling::period::fields)) << record;
        }
    }
    // (ran_on and papi records are checked where they are written: a short
    // run may end before its first cpu-clock sample, and PAPI needs counters.)
    for (const char* rec : {ss::sampling::rec, ss::backend::rec, ss::thread::rec, ss::access::rec, ss::end::rec})
        EXPECT_TRUE(seen.count(rec)) << "no " << rec << " record in " << r.summary;
}

}  // namespace stacksage::testing
