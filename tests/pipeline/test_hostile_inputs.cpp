// Run directories and files that fight back (issue 18, inputs): FIFOs and
// links to /dev/zero where inputs should be, directories named like logs,
// files beyond the size limits, unreadable host directories, duplicate logs,
// ids and masks no recorder writes, and what `check` and `topo` make of
// them. Each test guards against the old failure, a hang, with an alarm: a
// regression fails the test (SIGALRM) instead of stalling the suite.
#include <gtest/gtest.h>

#include <grp.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "parsers/hwloc_loader.hpp"
#include "parsers/input_file.hpp"
#include "parsers/process_log.hpp"
#include "parsers/run_loader.hpp"
#include "parsers/sample_file_reader.hpp"
#include "parsers/sample_summary.hpp"
#include "tests/support/shell.hpp"
#include "tests/support/synthetic_run.hpp"

using namespace stacksage;
using namespace stacksage::testing;
namespace fs = std::filesystem;

namespace {

// Kills the test (SIGALRM) when it runs for more than a minute: what a
// blocking open of a FIFO, or an endless read of /dev/zero, would do.
class HangGuard {
public:
    HangGuard() { ::alarm(60); }
    ~HangGuard() { ::alarm(0); }
    HangGuard(const HangGuard&) = delete;
    HangGuard& operator=(const HangGuard&) = delete;
};

const std::string kCli = std::string(STACKSAGE_BINARY_DIR) + "/cli/stacksage";

Shell cli(const std::string& args) { return shell("timeout 120 " + kCli + " " + args); }

LoadedRun load(const TempDir& dir) {
    Result<LoadedRun> r = load_run(dir.str());
    EXPECT_TRUE(r) << (r ? "" : r.error().message);
    return std::move(r.value());
}

const LoadNote* note_about(const LoadedRun& run, std::string_view file, std::string_view message_part) {
    for (const LoadNote& n : run.notes)
        if (n.file == file && n.message.find(message_part) != std::string::npos) return &n;
    return nullptr;
}

std::string all_notes(const LoadedRun& run) {
    std::string out;
    for (const LoadNote& n : run.notes) out += fmt::format("{}: {}: {}\n", to_string(n.level), n.file, n.message);
    return out;
}

void make_fifo(const fs::path& path) { ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path; }

// A sparse file of `bytes` (no disk used): larger than a limit at no cost.
void make_sparse(const fs::path& path, std::uint64_t bytes) {
    { std::ofstream(path, std::ios::binary) << "{"; }
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(bytes)), 0) << path;
}

// One host n01 (2 cores) with one busy process (pid 100, rank 0), run.json
// and topology.xml: the rest is planted by each test.
struct SmallRun {
    TempDir dir;
    SyntheticRun run{dir.path()};
    fs::path host = dir.path() / "n01";
    fs::path log;
    SmallRun() {
        run.write_run_json();
        run.add_host("n01", "pack:1 core:2 pu:1");
        log = run.add_process(busy_process("n01", 100, 0, 2, "0-1"));
    }
};

}  // namespace

// ---- the shared helper --------------------------------------------------------

TEST(InputFile, RefusesWhatIsNoRegularFileWithoutWaitingAndSaysWhatItIs) {
    HangGuard guard;
    TempDir dir;
    std::string text;
    make_fifo(dir.path() / "fifo");
    auto p = read_input_file((dir.path() / "fifo").string(), 1024, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::NotRegular);
    EXPECT_EQ(p->reason, "it is a FIFO (named pipe), not a regular file");

    fs::create_symlink("/dev/zero", dir.path() / "zero");
    p = read_input_file((dir.path() / "zero").string(), 1024, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::NotRegular);
    EXPECT_TRUE(p->through_link);
    EXPECT_EQ(p->reason, "it is a symbolic link to a character device (/dev/zero), not a regular file");

    fs::create_directory(dir.path() / "d");
    p = read_input_file((dir.path() / "d").string(), 1024, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::Directory);
    EXPECT_EQ(p->reason, "it is a directory, not a file");

    p = read_input_file((dir.path() / "none").string(), 1024, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::Missing);
    EXPECT_FALSE(p->through_link);
    fs::create_symlink(dir.path() / "none", dir.path() / "dangling");
    p = read_input_file((dir.path() / "dangling").string(), 1024, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::Missing);
    EXPECT_TRUE(p->through_link);
    EXPECT_NE(p->reason.find("symbolic link to a file that does not exist"), std::string::npos) << p->reason;
}

TEST(InputFile, CapsTheSizeAndReadsProcFilesWhoseSizeIsZero) {
    TempDir dir;
    std::string text;
    SyntheticRun::write_file(dir.path() / "ten", "0123456789");
    EXPECT_FALSE(read_input_file((dir.path() / "ten").string(), 10, "a test file", text));
    EXPECT_EQ(text, "0123456789");
    auto p = read_input_file((dir.path() / "ten").string(), 9, "a test file", text);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->kind, InputProblem::Kind::TooLarge);
    EXPECT_EQ(p->reason, "it is larger than 9 bytes, the most stacksage reads from a test file");
    EXPECT_FALSE(read_input_prefix((dir.path() / "ten").string(), 4, text));
    EXPECT_EQ(text, "0123");

    // /proc reports a size of 0 and holds text: the size is not the content's.
    struct stat info {};
    ASSERT_EQ(::stat("/proc/self/status", &info), 0);
    EXPECT_EQ(info.st_size, 0);
    EXPECT_FALSE(read_input_file("/proc/self/status", input_limits::kMiB, "a test file", text));
    EXPECT_NE(text.find("Name:"), std::string::npos) << text;

    EXPECT_EQ(describe_byte_count(4 * input_limits::kGiB), "4 GiB");
    EXPECT_EQ(describe_byte_count(256 * input_limits::kMiB), "256 MiB");
}

// ---- bullet 1: every input of a run directory -----------------------------------

TEST(HostileRunDirectory, FifosWhereInputsShouldBeAreNotedNotWaitedOn) {
    HangGuard guard;
    SmallRun r;
    fs::remove(r.dir.path() / "run.json");
    make_fifo(r.dir.path() / "run.json");
    fs::remove(r.host / "topology.xml");
    make_fifo(r.host / "topology.xml");
    make_fifo(r.host / "topology.snap");
    make_fifo(r.host / "rank-0000.pid-100.samples.jsonl");
    make_fifo(r.host / "rank-0001.pid-101.jsonl");
    LoadedRun run = load(r.dir);
    const std::string notes = all_notes(run);
    const LoadNote* n = note_about(run, "run.json", "it is a FIFO (named pipe), not a regular file");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    n = note_about(run, "n01/topology.xml", "it is a FIFO (named pipe), not a regular file");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_NE(n->message.find("rebuilt from the cpusets"), std::string::npos) << n->message;
    n = note_about(run, "n01/topology.snap", "it is a FIFO (named pipe), not a regular file");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Warning);
    n = note_about(run, "n01/rank-0000.pid-100.samples.jsonl", "it is a FIFO (named pipe), not a regular file");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    n = note_about(run, "n01/rank-0001.pid-101.jsonl", "it is a FIFO (named pipe), not a regular file; the file is skipped");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_EQ(run.stats.logs, 2u);
    EXPECT_EQ(run.stats.logs_skipped, 1u);
    EXPECT_EQ(run.stats.processes, 1u);
}

TEST(HostileRunDirectory, LinksToDevZeroAreRefusedBeforeAnyByteIsRead) {
    HangGuard guard;
    SmallRun r;
    fs::remove(r.host / "topology.xml");
    fs::create_symlink("/dev/zero", r.host / "topology.xml");
    fs::create_symlink("/dev/zero", r.host / "topology.snap");
    fs::create_symlink("/dev/zero", r.host / "rank-0000.pid-100.samples.jsonl");
    fs::create_symlink("/dev/zero", r.host / "rank-0001.pid-101.jsonl");
    fs::remove(r.dir.path() / "run.json");
    fs::create_symlink("/dev/zero", r.dir.path() / "run.json");
    LoadedRun run = load(r.dir);
    const std::string notes = all_notes(run);
    constexpr std::string_view kZero = "it is a symbolic link to a character device (/dev/zero), not a regular file";
    for (const char* file : {"run.json", "n01/topology.xml", "n01/topology.snap", "n01/rank-0000.pid-100.samples.jsonl",
                             "n01/rank-0001.pid-101.jsonl"})
        EXPECT_NE(note_about(run, file, kZero), nullptr) << file << "\n" << notes;
    EXPECT_EQ(run.stats.logs_skipped, 1u);
    EXPECT_EQ(run.stats.processes, 1u);
}

// An event log that is a directory, a FIFO or a link to /dev/zero was left
// out without a word, and the report claimed fewer processes.
TEST(HostileRunDirectory, EveryLogNamedEntryIsCountedAndASkippedOneIsAnError) {
    HangGuard guard;
    SmallRun r;
    fs::create_directory(r.host / "rank-0001.pid-101.jsonl");
    make_fifo(r.host / "rank-0002.pid-102.jsonl");
    fs::create_symlink("/dev/zero", r.host / "rank-0003.pid-103.jsonl");
    fs::create_symlink(r.host / "gone", r.host / "rank-0004.pid-104.jsonl");
    LoadedRun run = load(r.dir);
    EXPECT_EQ(run.stats.logs, 5u);
    EXPECT_EQ(run.stats.logs_skipped, 4u);
    const std::string notes = all_notes(run);
    EXPECT_NE(note_about(run, "n01/rank-0001.pid-101.jsonl", "it is a directory, not a file"), nullptr) << notes;
    EXPECT_NE(note_about(run, "n01/rank-0002.pid-102.jsonl", "FIFO"), nullptr) << notes;
    EXPECT_NE(note_about(run, "n01/rank-0003.pid-103.jsonl", "/dev/zero"), nullptr) << notes;
    EXPECT_NE(note_about(run, "n01/rank-0004.pid-104.jsonl", "symbolic link to a file that does not exist"), nullptr)
        << notes;
    for (const LoadNote& n : run.notes) {
        if (n.file.find("pid-10") != std::string::npos && n.file != "n01/rank-0000.pid-100.jsonl") {
            EXPECT_EQ(n.level, LoadNote::Level::Error) << n.file;
        }
    }
}

TEST(HostileRunDirectory, FilesOverTheirLimitAreRefusedByName) {
    HangGuard guard;
    SmallRun r;
    make_sparse(r.dir.path() / "run.json", input_limits::kRunJson + 1);
    make_sparse(r.host / "topology.xml", input_limits::kTopologyXml + 1);
    make_sparse(r.host / "rank-0001.pid-101.jsonl", input_limits::kEventLog + 1);
    make_sparse(r.host / "rank-0000.pid-100.samples.jsonl", input_limits::kSampleSummary + 1);
    LoadedRun run = load(r.dir);
    const std::string notes = all_notes(run);
    EXPECT_NE(note_about(run, "run.json", "it is larger than 16 MiB, the most stacksage reads from run.json"), nullptr)
        << notes;
    EXPECT_NE(note_about(run, "n01/topology.xml", "it is larger than 256 MiB, the most stacksage reads from an hwloc topology"),
              nullptr)
        << notes;
    EXPECT_NE(note_about(run, "n01/rank-0001.pid-101.jsonl", "it is larger than 4 GiB, the most stacksage reads from an event log"),
              nullptr)
        << notes;
    EXPECT_NE(note_about(run, "n01/rank-0000.pid-100.samples.jsonl", "it is larger than 1 GiB"), nullptr) << notes;
    EXPECT_EQ(run.stats.logs_skipped, 1u);
}

TEST(HostileRunDirectory, TheOtherReadersRefuseFifosToo) {
    HangGuard guard;
    TempDir dir;
    make_fifo(dir.path() / "f");
    const std::string f = (dir.path() / "f").string();
    auto summary = read_sample_summary(f);
    ASSERT_FALSE(summary);
    EXPECT_NE(summary.error().message.find("FIFO"), std::string::npos) << summary.error().message;
    auto raw = read_raw_sample_file(f);
    ASSERT_FALSE(raw);
    EXPECT_NE(raw.error().message.find("FIFO"), std::string::npos) << raw.error().message;
    auto log = read_process_log(f);
    ASSERT_FALSE(log);
    EXPECT_NE(log.error().message.find("FIFO"), std::string::npos) << log.error().message;
    auto xml = load_hwloc_xml(f);
    ASSERT_FALSE(xml);
    EXPECT_NE(xml.error().message.find("FIFO"), std::string::npos) << xml.error().message;
}

// ---- bullet 2: skipped logs fail `check`, and the listing is capped ---------------

TEST(HostileRunDirectory, CheckFailsOnInputErrorsAtEitherThreshold) {
    HangGuard guard;
    SmallRun r;
    EXPECT_EQ(cli("check " + r.dir.str() + " --fail-on error").exit_code, 0);
    fs::create_symlink("/dev/zero", r.host / "rank-0001.pid-101.jsonl");
    Shell c = cli("check " + r.dir.str() + " --fail-on error");
    EXPECT_EQ(c.exit_code, 1) << c.output;
    EXPECT_NE(c.output.find("input error: n01/rank-0001.pid-101.jsonl: cannot read the event log: it is a symbolic "
                            "link to a character device (/dev/zero)"),
              std::string::npos)
        << c.output;
    EXPECT_NE(c.output.find("1 input error(s), 1 event log(s) skipped; failing: the input is incomplete"),
              std::string::npos)
        << c.output;
    EXPECT_EQ(cli("check " + r.dir.str() + " --fail-on warning").exit_code, 1);
    EXPECT_EQ(cli("check -q " + r.dir.str() + " --fail-on error").output, "");
    // The report still renders, and names the file.
    Shell report = cli("report " + r.dir.str());
    EXPECT_EQ(report.exit_code, 0) << report.output;
    EXPECT_NE(report.output.find("n01/rank-0001.pid-101.jsonl"), std::string::npos) << report.output;
}

TEST(HostileRunDirectory, CheckListsTheFirstInputErrorsThenHowManyMore) {
    SmallRun r;
    for (int i = 1; i <= 30; ++i)
        SyntheticRun::write_file(r.host / fmt::format("rank-{:04d}.pid-{}.jsonl", i, 100 + i), "garbage\nmore\n");
    Shell c = cli("check " + r.dir.str() + " --fail-on error");
    EXPECT_EQ(c.exit_code, 1);
    std::size_t listed = 0;
    for (std::size_t at = c.output.find("input error: "); at != std::string::npos; at = c.output.find("input error: ", at + 1))
        ++listed;
    EXPECT_EQ(listed, 20u) << c.output;
    EXPECT_NE(c.output.find("... and 10 more input error(s), 30 in all"), std::string::npos) << c.output;
    EXPECT_NE(c.output.find("30 input error(s), 30 event log(s) skipped"), std::string::npos) << c.output;
}

// ---- bullet 3 ---------------------------------------------------------------------

TEST(HostileTopo, AnEmptyInputIsRefusedNotTakenForThisMachine) {
    Shell t = cli("topo --input ''");
    EXPECT_EQ(t.exit_code, 2) << t.output;
    EXPECT_NE(t.output.find("--input is empty"), std::string::npos) << t.output;
    EXPECT_EQ(t.output.find("Thread"), std::string::npos) << t.output;
    t = cli("topo -i ''");
    EXPECT_EQ(t.exit_code, 2) << t.output;
}

// A file of /proc reports a size of 0: it was called "empty", though it is not.
TEST(HostileTopo, AProcFileIsReadAndJudgedByWhatItHolds) {
    HangGuard guard;
    Shell t = cli("topo --input /proc/self/status");
    EXPECT_EQ(t.exit_code, 2) << t.output;
    EXPECT_EQ(t.output.find("empty"), std::string::npos) << t.output;
    EXPECT_NE(t.output.find("it is not XML"), std::string::npos) << t.output;
    TempDir dir;
    SyntheticRun::write_file(dir.path() / "empty.xml", "");
    t = cli("topo --input " + (dir.path() / "empty.xml").string());
    EXPECT_EQ(t.exit_code, 2) << t.output;
    EXPECT_NE(t.output.find("the file is empty (reading it gave no byte)"), std::string::npos) << t.output;
    for (const char* device : {"/dev/zero", "/dev/null"}) {
        t = cli(std::string("topo --input ") + device);
        EXPECT_EQ(t.exit_code, 2) << t.output;
        EXPECT_NE(t.output.find("it is a character device, not a regular file"), std::string::npos) << t.output;
    }
}

TEST(HostileLogs, PidsAndTidsNoKernelGivesAreSkippedWithAWarning) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 2, "0-1");
    p.mpi = true;
    std::string text = event_log_text(p);
    // A thread_start with a negative tid, an affinity event with pid 0, and
    // an MPI snapshot listing a thread of tid 0.
    text += R"({"v":1,"ev":"thread_start","t":3000000000,"pid":100,"tid":-5,"seq":9,"cpuset":"0"})" "\n";
    text += R"({"v":1,"ev":"affinity","t":3000000001,"pid":0,"tid":100,"target_tid":100,"cpuset":"0","rc":0})" "\n";
    text += R"({"v":1,"ev":"mpi_finalize","t":9000000000,"pid":100,"tid":100,"rc":0,"threads":[{"tid":0,"cpuset":"1"}]})" "\n";
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0000.pid-100.jsonl", text);
    // A log whose first event has a negative pid: it is refused by name.
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0001.pid-101.jsonl",
                             R"({"v":1,"ev":"process_start","t":1,"pid":-101,"tid":-101})" "\n");
    LoadedRun r = load(dir);
    const std::string notes = all_notes(r);
    const LoadNote* n = note_about(r, "n01/rank-0000.pid-100.jsonl", "2 event(s) with a pid or tid of 0 or less were skipped");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Warning);
    n = note_about(r, "n01/rank-0000.pid-100.jsonl", "1 thread(s) listed in MPI snapshots have a tid of 0 or less");
    ASSERT_NE(n, nullptr) << notes;
    n = note_about(r, "n01/rank-0001.pid-101.jsonl", "has pid -101 and tid -101; the recorder writes only positive ones");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_EQ(r.stats.processes, 1u);
    EXPECT_EQ(r.stats.flows, 2u);  // the main thread and thread 10001, no flow for tid -5 or 0
}

TEST(HostileLogs, ATidStartedTwiceEndsTheEarlierThreadAndTheMainThreadsIsKept) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess p = busy_process("n01", 100, 0, 2, "0-1");  // thread 10001 from 1.001 s to 10.999 s
    std::string text = event_log_text(p);
    text += R"({"v":1,"ev":"thread_start","t":5000000000,"pid":100,"tid":10001,"seq":2,"cpuset":"1"})" "\n";
    text += R"({"v":1,"ev":"thread_start","t":6000000000,"pid":100,"tid":100,"seq":3,"cpuset":"1"})" "\n";
    SyntheticRun::write_file(dir.path() / "n01" / "rank-0000.pid-100.jsonl", text);
    LoadedRun r = load(dir);
    const std::string notes = all_notes(r);
    EXPECT_NE(note_about(r, "n01/rank-0000.pid-100.jsonl",
                         "1 thread_start event(s) name the tid of a thread of this process still running"),
              nullptr)
        << notes;
    EXPECT_NE(note_about(r, "n01/rank-0000.pid-100.jsonl", "1 thread_start event(s) name the tid of the main thread"),
              nullptr)
        << notes;
    // Main, the first 10001 (ended at 5 s) and the second; none overlap in tid.
    EXPECT_EQ(r.stats.flows, 3u);
    const Model& m = r.model;
    const AttrKey tid_key = *m.find_key("tid");
    std::vector<std::pair<std::int64_t, std::int64_t>> lives_of_10001;
    for (ComponentId f : m.components_of_type(ComponentType::Flow))
        if (m.get_int(f, tid_key) == 10001)
            lives_of_10001.emplace_back(*m.get_int(f, keys::start_ns), *m.get_int(f, keys::end_ns));
    std::sort(lives_of_10001.begin(), lives_of_10001.end());
    ASSERT_EQ(lives_of_10001.size(), 2u);
    EXPECT_EQ(lives_of_10001[0].second, 5'000'000'000);
    EXPECT_EQ(lives_of_10001[1].first, 5'000'000'000);
}

TEST(HostileLogs, TheSamePidTwiceKeepsOneLogAndSkipsTheCopyWithAnError) {
    SmallRun r;
    fs::copy_file(r.log, r.host / "pid-100.1.jsonl");
    LoadedRun run = load(r.dir);
    const std::string notes = all_notes(run);
    const LoadNote* n = note_about(run, "n01/pid-100.1.jsonl", "another log of pid 100 on this host");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Error);
    EXPECT_NE(n->message.find("(n01/rank-0000.pid-100.jsonl) covers the same time"), std::string::npos) << n->message;
    EXPECT_EQ(run.stats.logs, 2u);
    EXPECT_EQ(run.stats.logs_skipped, 1u);
    EXPECT_EQ(run.stats.processes, 1u);
    EXPECT_EQ(run.stats.flows, 2u);
}

TEST(HostileLogs, HugeMasksAreClippedAndNotedAndTheRebuiltNodeStaysSmall) {
    HangGuard guard;
    TempDir dir;
    SyntheticRun run(dir.path());  // no topology.xml: the node is rebuilt from the masks
    SyntheticProcess p = busy_process("n01", 100, 0, 3, "0-1");
    p.online_cpus = "0-3";
    p.threads[0].cpuset = "0-1000000";  // a giant range
    p.threads[1].cpuset = "5000000";    // beyond what a cpuset may name at all
    run.add_process(p);
    LoadedRun r = load(dir);
    const std::string notes = all_notes(r);
    const LoadNote* n = note_about(r, "n01/rank-0000.pid-100.jsonl", "mask(s) name CPUs numbered 16384 or more (up to 1000000)");
    ASSERT_NE(n, nullptr) << notes;
    EXPECT_EQ(n->level, LoadNote::Level::Warning);
    n = note_about(r, "n01/rank-0000.pid-100.jsonl", "cpuset field(s) are not CPU lists");
    ASSERT_NE(n, nullptr) << notes;
    // The node is the online CPUs, not a million; the rest is noted.
    EXPECT_EQ(r.model.count_of_type(ComponentType::Thread), 4u);
    EXPECT_NE(note_about(r, "n01", "name CPUs [4-16383]"), nullptr) << notes;
    EXPECT_TRUE(r.model.check_consistency().empty());

    // With a topology: the same, against its 2 PUs.
    run.add_host("n01", "pack:1 core:2 pu:1");
    LoadedRun with_topology = load(dir);
    EXPECT_NE(note_about(with_topology, "n01", "name CPUs [2-16383]"), nullptr) << all_notes(with_topology);
    EXPECT_EQ(with_topology.model.count_of_type(ComponentType::Thread), 2u);
}

// A host directory that cannot be read said "holds no event logs"; the real
// error is what stood in the way. The tests run as root, whom permissions do
// not stop: a child process drops to nobody first.
TEST(HostileRunDirectory, AnUnreadableHostDirectoryIsReportedWithItsError) {
    HangGuard guard;
    SmallRun r;
    fs::permissions(r.dir.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                      fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(r.host, fs::perms::none);
    const auto load_as_nobody = [&](std::string& message, bool& loaded) {
        int pipe_fds[2];
        ASSERT_EQ(::pipe(pipe_fds), 0);
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::close(pipe_fds[0]);
            if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
                ::_exit(3);
            Result<LoadedRun> run = load_run(r.dir.str());
            std::string out = run ? "loaded\n" : run.error().message;
            if (run)
                for (const LoadNote& n : run->notes) out += n.file + ": " + n.message + "\n";
            if (::write(pipe_fds[1], out.data(), out.size()) < 0) ::_exit(4);
            ::_exit(run ? 0 : 1);
        }
        ::close(pipe_fds[1]);
        char buf[4096];
        for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) message.append(buf, static_cast<std::size_t>(n));
        ::close(pipe_fds[0]);
        int status = 0;
        ::waitpid(child, &status, 0);
        ASSERT_TRUE(WIFEXITED(status)) << status;
        ASSERT_LE(WEXITSTATUS(status), 1) << "the child could not drop to nobody";
        loaded = WEXITSTATUS(status) == 0;
    };
    std::string message;
    bool loaded = true;
    load_as_nobody(message, loaded);
    EXPECT_FALSE(loaded) << message;
    EXPECT_NE(message.find("holds no event log that can be read: '" + r.host.string() +
                           "' cannot be read (Permission denied)"),
              std::string::npos)
        << message;
    EXPECT_EQ(message.find("holds no event logs"), std::string::npos) << message;

    // With a readable host beside it, the run loads and the host is named.
    SyntheticRun(r.dir.path()).add_process(busy_process("n02", 200, 1, 1, "0"));
    fs::permissions(r.dir.path() / "n02", fs::perms::all);
    fs::permissions(r.dir.path() / "n02" / "rank-0001.pid-200.jsonl", fs::perms::all);
    message.clear();
    load_as_nobody(message, loaded);
    EXPECT_TRUE(loaded) << message;
    EXPECT_NE(message.find("n01: the host directory cannot be read (Permission denied)"), std::string::npos) << message;
    fs::permissions(r.host, fs::perms::owner_all);
}

TEST(HostileLogs, APidReusedAfterItsProcessExitedIsAnotherProcess) {
    TempDir dir;
    SyntheticRun run(dir.path());
    run.add_host("n01", "pack:1 core:2 pu:1");
    SyntheticProcess first = busy_process("n01", 100, -1, 1, "0-1");
    first.start_ns = 1'000'000'000;
    first.end_ns = 2'000'000'000;
    SyntheticProcess second = busy_process("n01", 100, -1, 1, "0-1");
    second.start_ns = 3'000'000'000;
    second.end_ns = 4'000'000'000;
    SyntheticRun::write_file(dir.path() / "n01" / "pid-100.jsonl", event_log_text(first));
    SyntheticRun::write_file(dir.path() / "n01" / "pid-100.1.jsonl", event_log_text(second));
    LoadedRun r = load(dir);
    EXPECT_EQ(r.stats.processes, 2u) << all_notes(r);
    EXPECT_EQ(note_about(r, "n01/pid-100.1.jsonl", "another log of pid 100"), nullptr) << all_notes(r);
    const Model& m = r.model;
    std::vector<std::int64_t> starts;
    for (ComponentId p : m.components_of_type(ComponentType::Process)) starts.push_back(*m.get_int(p, keys::start_ns));
    std::sort(starts.begin(), starts.end());
    EXPECT_EQ(starts, (std::vector<std::int64_t>{1'000'000'000, 3'000'000'000}));
}
