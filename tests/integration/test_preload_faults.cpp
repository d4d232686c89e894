// The hardening issue's fault cases: the recorder inside a program that runs
// out of descriptors, loses its output directory or finds it full, dies by
// (or handles) signals, starts children with vfork and posix_spawn, loads an
// OpenMP runtime with dlopen, or writes into a hostile shared directory.
//
// In every case the program must behave exactly as without the recorder
// (each test runs it both ways and compares the exit status and output), and
// a loss of recording is said once on stderr, never silently.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <thread>

#include "cli/sanitizer_runtime.hpp"
#include "tests/integration/log_checks.hpp"

extern char** environ;

namespace stacksage::testing {
namespace {

std::string read_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The recorder's lines on stderr ("stacksage: ...").
std::vector<std::string> recorder_messages(const std::string& err) {
    std::vector<std::string> out;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);)
        if (line.rfind("stacksage: ", 0) == 0) out.push_back(line);
    return out;
}

RunResult run_fault(const std::vector<std::string>& args, const std::optional<fs::path>& output,
                    std::map<std::string, std::string> env = {}) {
    RunOptions o;
    o.argv = {example("fault_cases")};
    for (const auto& a : args) o.argv.push_back(a);
    o.preload = output.has_value();
    o.output = output;
    o.env = std::move(env);
    return run(o);
}

// The same program without the recorder: what the traced run must match.
RunResult run_untraced(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
    return run_fault(args, std::nullopt, std::move(env));
}

// LeakSanitizer reads /proc/PID/task at exit, which takes a descriptor that
// an application which used them all up no longer has. In the ASan build
// these runs keep every other check and leave leaks out; elsewhere: nothing.
std::map<std::string, std::string> no_leak_check_if_sanitized(bool traced) {
    const char* variable = cli::sanitizer_options_variable();
    if (variable == nullptr || std::string(variable) != "ASAN_OPTIONS") return {};
    const char* now = std::getenv(variable);
    std::string options = now ? now : "";
    if (traced) options = cli::sanitizer_options_for_traced_programs(options);
    return {{variable, options + ":detect_leaks=0"}};
}

std::string describe_status(int wait_status) {
    if (WIFEXITED(wait_status)) return "exit " + std::to_string(WEXITSTATUS(wait_status));
    if (WIFSIGNALED(wait_status))
        return std::string("signal ") + strsignal(WTERMSIG(wait_status)) +
               (WCOREDUMP(wait_status) ? " (core)" : "");
    return "status " + std::to_string(wait_status);
}

// A file's content and modification time: what "never written" is checked by.
struct Sentinel {
    fs::path path;
    std::string content;
    struct timespec mtime{};

    static Sentinel make(const fs::path& path, const std::string& content) {
        std::ofstream(path) << content;
        // In the past, so that any write would visibly move it.
        struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
        ::utimensat(AT_FDCWD, path.c_str(), times, 0);
        Sentinel s{path, content, {}};
        struct stat st{};
        ::stat(path.c_str(), &st);
        s.mtime = st.st_mtim;
        return s;
    }
    void expect_untouched() const {
        SCOPED_TRACE(path.string());
        EXPECT_EQ(read_text(path), content);
        struct stat st{};
        ASSERT_EQ(::stat(path.c_str(), &st), 0);
        EXPECT_EQ(st.st_mtim.tv_sec, mtime.tv_sec);
        EXPECT_EQ(st.st_mtim.tv_nsec, mtime.tv_nsec);
        EXPECT_EQ(st.st_nlink, 1u);
    }
};

// A program started in the background: held before exec until release(),
// so that the test knows its pid (and the names its logs will get) first.
class Spawned {
public:
    // file_size_limit: RLIMIT_FSIZE in bytes for the program, with SIGXFSZ
    // ignored (a write past it fails with EFBIG instead of killing it).
    Spawned(std::vector<std::string> argv, const std::optional<fs::path>& output,
            std::map<std::string, std::string> extra_env = {}, std::optional<rlim_t> file_size_limit = std::nullopt) {
        std::map<std::string, std::string> env;
        for (char** e = environ; *e != nullptr; ++e) {
            const char* eq = std::strchr(*e, '=');
            if (eq) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
        }
        env.erase("LD_PRELOAD");
        env.erase("STACKSAGE_OUTPUT");
        // As run() does (a sanitized build's runtime and options included).
        if (output) add_preload_environment(env, output);
        for (const auto& [k, v] : extra_env) env[k] = v;
        for (const auto& [k, v] : env) env_strings_.push_back(k + "=" + v);
        std::vector<char*> envp;
        for (auto& s : env_strings_) envp.push_back(s.data());
        envp.push_back(nullptr);
        args_ = std::move(argv);
        std::vector<char*> args;
        for (auto& a : args_) args.push_back(a.data());
        args.push_back(nullptr);

        int gate[2], out[2], err[2];
        if (::pipe2(gate, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
            throw std::runtime_error("pipe failed");
        pid_ = ::fork();
        if (pid_ < 0) throw std::runtime_error("fork failed");
        if (pid_ == 0) {
            ::close(gate[1]);  // else the read below waits for this very process
            char c;
            while (::read(gate[0], &c, 1) < 0 && errno == EINTR) {
            }
            ::dup2(out[1], 1);
            ::dup2(err[1], 2);
            if (file_size_limit) {
                ::signal(SIGXFSZ, SIG_IGN);
                const struct rlimit lim{*file_size_limit, *file_size_limit};
                if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(126);
            }
            ::execve(args[0], args.data(), envp.data());
            ::_exit(127);
        }
        ::close(gate[0]);
        ::close(out[1]);
        ::close(err[1]);
        gate_ = gate[1];
        pipes_.emplace(out[0], err[0], &result_);
    }
    ~Spawned() {
        if (pid_ > 0 && !waited_) {
            ::kill(pid_, SIGKILL);
            release();
            int status;
            ::waitpid(pid_, &status, 0);
        }
        if (gate_ >= 0) ::close(gate_);
    }
    Spawned(const Spawned&) = delete;
    Spawned& operator=(const Spawned&) = delete;

    pid_t pid() const { return pid_; }
    void release() {
        if (gate_ < 0) return;
        ::close(gate_);
        gate_ = -1;
    }
    // Reads stdout until a line containing `text` (false after 20 s or at EOF).
    bool wait_for_output(const std::string& text) {
        release();
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (result_.out.find(text) == std::string::npos) {
            if (std::chrono::steady_clock::now() > deadline || !pipes_->pump(200)) return false;
        }
        return true;
    }
    RunResult finish(std::chrono::seconds timeout = std::chrono::seconds(60)) {
        release();
        auto deadline = std::chrono::steady_clock::now() + timeout;
        while (pipes_->open()) {
            if (std::chrono::steady_clock::now() > deadline) {
                ::kill(pid_, SIGKILL);
                result_.err += "\n[test: killed after timeout]\n";
                deadline += std::chrono::seconds(5);
            }
            pipes_->pump(200);
        }
        while (::waitpid(pid_, &result_.wait_status, 0) < 0 && errno == EINTR) {
        }
        waited_ = true;
        return result_;
    }

private:
    std::vector<std::string> args_;
    std::vector<std::string> env_strings_;
    pid_t pid_ = -1;
    int gate_ = -1;
    bool waited_ = false;
    RunResult result_;
    std::optional<OutputPipes> pipes_;  // reads into result_
};

// A small tmpfs mounted on dir for the test's lifetime (root only).
class SmallTmpfs {
public:
    SmallTmpfs(const fs::path& dir, const char* options) : dir_(dir) {
        mounted_ = ::geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", 0, options) == 0;
        if (!mounted_) why_ = ::geteuid() != 0 ? "not root" : std::strerror(errno);
    }
    ~SmallTmpfs() {
        if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
    }
    bool mounted() const { return mounted_; }
    const std::string& why() const { return why_; }

private:
    fs::path dir_;
    bool mounted_ = false;
    std::string why_;
};

// ---------------------------------------------------------------------------
// Descriptors

// The application lowers its descriptor limit to 32 and opens files until
// EMFILE, then starts threads, forks and tries a dlopen. The recorder's own
// descriptors sit above the limit (it moved them to 1000 and up), so the
// application opens exactly as many files as without it; its threads are
// recorded (that needs no descriptor); the forked child is recorded too: its
// stream is in the node file its parent opened, so it needs no descriptor.
TEST(PreloadFaults, DescriptorExhaustionLeavesTheApplicationAsItWas) {
    RunResult plain = run_untraced({"emfile"}, no_leak_check_if_sanitized(false));
    ASSERT_EQ(plain.exit_code(), 3) << plain.err;
    ASSERT_NE(plain.out.find("until EMFILE"), std::string::npos) << plain.out;

    TempDir out;
    RunResult r = run_fault({"emfile"}, out.path(), no_leak_check_if_sanitized(true));
    EXPECT_EQ(r.wait_status, plain.wait_status) << describe_status(r.wait_status) << "\n" << r.err;
    EXPECT_EQ(r.out, plain.out) << "the application saw a different number of free descriptors";
    EXPECT_NE(r.out.find("emfile: 16 threads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("emfile: child exited 4"), std::string::npos) << r.out;

    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 2u) << describe(logs);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    expect_complete(log);
    EXPECT_EQ(logs[1].start()["origin"], "fork");
    EXPECT_EQ(logs[1].pid(), (*log.first("fork"))["child_pid"]);
    EXPECT_EQ(log.all("thread_start").size(), 16u);
    EXPECT_EQ(log.thread_ends().size(), 16u);
    auto fork = log.first("fork");
    ASSERT_TRUE(fork);
    const int child = (*fork)["child_pid"];
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["how"], "exit");
    EXPECT_EQ((*end)["status"], 3);
    EXPECT_EQ((*end)["threads_created"], 16);
    // The model writer could not be loaded either: said in the log.
    auto model = log.first("model");
    ASSERT_TRUE(model);
    EXPECT_FALSE((*model)["ok"].get<bool>());
    EXPECT_NE((*model)["error"].get<std::string>().find("Too many open files"), std::string::npos)
        << model->dump();

    // The child's whole stream, and nothing said: nothing failed.
    expect_complete(logs[1]);
    EXPECT_EQ(logs[1].pid(), child);
    EXPECT_TRUE(recorder_messages(r.err).empty()) << r.err;
}

// A copy of the preload next to the model writer of an older stacksage (a
// shared folder of libraries that kept an old file): the writer's entry
// point has another interface, so it is refused by name, never called with
// arguments it does not take; the application runs as without it.
TEST(PreloadFaults, AModelWriterOfAnotherInterfaceIsRefusedNotCalled) {
    TempDir scratch;
    const fs::path lib = scratch.path() / "lib";
    fs::create_directory(lib);
    fs::copy_file(preload_library(), lib / "libstacksage-preload.so");
    fs::copy_file(STACKSAGE_OLDER_MODEL_WRITER_PATH, lib / "libstacksage-model.so");
    const fs::path out = scratch.path() / "out";
    fs::create_directory(out);
    RunResult plain = run_untraced({"threads", "20"});
    RunOptions o;
    o.argv = {example("fault_cases"), "threads", "20"};
    o.preload = false;
    o.env = {{"LD_PRELOAD", cli::with_sanitizer_runtime((lib / "libstacksage-preload.so").string())},
             {"STACKSAGE_OUTPUT", out.string()}};
    if (const char* variable = cli::sanitizer_options_variable())
        o.env[variable] = cli::sanitizer_options_for_traced_programs(o.env[variable]);
    RunResult r = run(o);
    EXPECT_EQ(r.wait_status, plain.wait_status) << describe_status(r.wait_status) << "\n" << r.err;
    EXPECT_EQ(r.out, plain.out);
    auto logs = read_logs(out);
    ASSERT_EQ(logs.size(), 1u) << describe(logs);
    expect_well_formed(logs[0]);
    expect_complete(logs[0]);
    EXPECT_EQ(logs[0].all("thread_start").size(), 20u);
    auto model = logs[0].first("model");
    ASSERT_TRUE(model);
    EXPECT_FALSE((*model)["ok"].get<bool>());
    const std::string error = (*model)["error"];
    EXPECT_NE(error.find((lib / "libstacksage-model.so").string()), std::string::npos) << error;
    EXPECT_NE(error.find("stacksage_write_process_model_v"), std::string::npos) << error;
}

// The limit is low from the start (lowered before exec, as `ulimit -n 32`
// does): the recorder puts its descriptors above it (the hard limit allows),
// so the application still opens exactly as many files as without it.
TEST(PreloadFaults, LowDescriptorLimitFromTheStartLeavesEveryNumberToTheApplication) {
    RunResult plain = run_untraced({"low-limit"}, no_leak_check_if_sanitized(false));
    ASSERT_EQ(plain.exit_code(), 3) << plain.err;
    TempDir out;
    RunResult r = run_fault({"low-limit"}, out.path(), no_leak_check_if_sanitized(true));
    EXPECT_EQ(r.wait_status, plain.wait_status) << r.err;
    EXPECT_EQ(r.out, plain.out) << "the recorder took descriptor numbers below the limit";
    EXPECT_TRUE(recorder_messages(r.err).empty()) << r.err;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 2u) << describe(logs);
    const ProcessLog* opener = find_log(logs, "fault_cases", 1, "exec");
    ASSERT_NE(opener, nullptr) << describe(logs);
    expect_well_formed(*opener);
    expect_complete(*opener);
    EXPECT_EQ(opener->start()["cmdline"][1], "open-all");
    EXPECT_EQ(opener->all("thread_start").size(), 4u);
    auto end = opener->first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 3);
}

// ---------------------------------------------------------------------------
// The output directory vanishes or is full

// rm -rf OUT while the application still creates threads (2,000 more: the
// log must grow, into a file that no longer has a name) and then forks. The
// application is unaffected; one line says the recording is lost (the
// forked child, which cannot record either, stays quiet: its parent said
// it); OUT is not recreated.
TEST(PreloadFaults, OutputDirectoryRemovedMidRun) {
    TempDir scratch;
    fs::create_directory(scratch.path() / "plain");
    Spawned plain_run({example("fault_cases"), "wait-rm"}, std::nullopt,
                      {{"FAULT_DIR", (scratch.path() / "plain").string()}});
    ASSERT_TRUE(plain_run.wait_for_output("wait-rm: ready"));
    fs::remove_all(scratch.path() / "plain");
    RunResult plain = plain_run.finish();
    ASSERT_EQ(plain.exit_code(), 5) << plain.err;

    const fs::path out = scratch.path() / "out";
    fs::create_directory(out);
    Spawned traced({example("fault_cases"), "wait-rm"}, out);
    ASSERT_TRUE(traced.wait_for_output("wait-rm: ready"));
    // What was recorded up to now, read just before the directory goes.
    auto before = read_logs(out);
    ASSERT_EQ(before.size(), 1u);
    expect_well_formed(before[0]);
    EXPECT_EQ(before[0].all("thread_start").size(), 50u);
    EXPECT_EQ(before[0].thread_ends().size(), 50u);
    const std::string log_name = before[0].start()["log"];
    fs::remove_all(out);
    RunResult r = traced.finish();

    EXPECT_EQ(r.wait_status, plain.wait_status) << describe_status(r.wait_status) << "\n" << r.err;
    EXPECT_EQ(r.out, plain.out);
    EXPECT_NE(r.out.find("wait-rm: 2000 more threads"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("wait-rm: child exited 4"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(out)) << "the recorder must not recreate the output directory";

    // The parent says once that its log was removed; the child (forked after
    // the removal, and unable to record) inherits that its process already
    // said its one line and stays quiet: one line on the job's stderr.
    auto messages = recorder_messages(r.err);
    ASSERT_EQ(messages.size(), 1u) << r.err;
    EXPECT_NE(messages[0].find(log_name), std::string::npos) << messages[0];
    EXPECT_NE(messages[0].find("removed"), std::string::npos) << messages[0];
}

// OUT on a tmpfs that is already full: the log cannot get its first chunk.
// The application runs as without the recorder, one message says why.
TEST(PreloadFaults, FullTmpfsOutputDirectory) {
    TempDir out;
    SmallTmpfs tmpfs(out.path(), "size=64k");
    if (!tmpfs.mounted()) GTEST_SKIP() << "cannot mount a small tmpfs: " << tmpfs.why();
    {
        std::ofstream fill(out.path() / "filler", std::ios::binary);
        std::string block(4096, 'x');
        for (int i = 0; i < 64 && fill; ++i) fill.write(block.data(), static_cast<std::streamsize>(block.size()));
    }
    RunResult plain = run_untraced({"threads", "200"});
    ASSERT_EQ(plain.exit_code(), 6) << plain.err;
    RunResult r = run_fault({"threads", "200"}, out.path());
    EXPECT_EQ(r.wait_status, plain.wait_status) << describe_status(r.wait_status) << "\n" << r.err;
    EXPECT_EQ(r.out, plain.out);
    auto messages = recorder_messages(r.err);
    ASSERT_EQ(messages.size(), 1u) << r.err;
    EXPECT_NE(messages[0].find("No space left on device"), std::string::npos) << messages[0];
    // Whatever is there is whole: no NULs, no torn lines.
    for (const auto& log : read_logs(out.path())) {
        EXPECT_EQ(log.nul_bytes, 0u) << log.file;
        EXPECT_TRUE(log.errors.empty()) << log.file;
        EXPECT_FALSE(log.torn_last_line) << log.file;
    }
}

// A process whose stream can no longer grow (a file-size limit of its own:
// the disk-full case without a full disk) ends its stream with the stop note
// in the room it kept, its length recorded after it; the node's other
// processes write their streams of the same file on, whole.
TEST(PreloadFaults, AStreamThatCannotGrowEndsWithItsStopNoteAndTheOtherStreamsGoOn) {
    TempDir out;
    // The node file's header page and the stream's first region (16 KiB)
    // fit under 64 KiB; its second region (256 KiB) does not.
    Spawned limited({example("fault_cases"), "threads", "2000"}, out.path(), {}, rlim_t{64} << 10);
    const RunResult stopped = limited.finish();
    EXPECT_EQ(stopped.exit_code(), 6) << stopped.err;  // the application ran on
    auto messages = recorder_messages(stopped.err);
    ASSERT_EQ(messages.size(), 1u) << stopped.err;
    EXPECT_NE(messages[0].find("cannot grow (File too large)"), std::string::npos) << messages[0];
    RunResult other = run_fault({"threads", "200"}, out.path());
    EXPECT_EQ(other.exit_code(), 6) << other.err;
    EXPECT_TRUE(recorder_messages(other.err).empty()) << other.err;

    const auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 2u) << describe(logs);
    for (const ProcessLog& log : logs) {
        SCOPED_TRACE(log.file.string());
        expect_well_formed(log);
        expect_complete(log);  // both ended: no NULs, nothing torn
        EXPECT_TRUE(log.stream_ended);
    }
    const ProcessLog& first = logs[0].pid() == limited.pid() ? logs[0] : logs[1];
    const ProcessLog& second = &first == &logs[0] ? logs[1] : logs[0];
    ASSERT_EQ(first.pid(), limited.pid());
    const auto& note = first.events.back();
    EXPECT_EQ(note["ev"], "log_stopped") << note.dump();
    EXPECT_EQ(note["errno"], 27);  // EFBIG
    EXPECT_EQ(note["how"], "exit");
    EXPECT_FALSE(first.first("process_end"));
    EXPECT_LT(first.all("thread_start").size(), 2000u);
    ASSERT_TRUE(second.first("process_end"));
    EXPECT_EQ(second.all("thread_start").size(), 200u);
    EXPECT_EQ(second.thread_ends().size(), 200u);
}

// ---------------------------------------------------------------------------
// Signals (SIGSEGV with and without a handler and SIGKILL are in
// test_preload_process.cpp)

struct SignalCase {
    RunResult plain;
    RunResult traced;
    ProcessLog log;
};

SignalCase run_signal_case(const std::string& mode, const TempDir& out) {
    SignalCase c;
    c.plain = run_untraced({mode});
    c.traced = run_fault({mode}, out.path());
    auto logs = read_logs(out.path());
    EXPECT_EQ(logs.size(), 1u) << describe(logs);
    if (!logs.empty()) c.log = logs[0];
    // The same end as without the recorder, core dump bit included, and the
    // same output.
    EXPECT_EQ(c.traced.wait_status, c.plain.wait_status)
        << mode << ": traced " << describe_status(c.traced.wait_status) << ", plain "
        << describe_status(c.plain.wait_status) << "\n" << c.traced.err;
    EXPECT_EQ(c.traced.out, c.plain.out) << mode;
    EXPECT_TRUE(recorder_messages(c.traced.err).empty()) << c.traced.err;
    return c;
}

// A signal's default action ends the log with the signal line, then what
// process_end would have said: the live threads' CPU times and a
// process_end with how "signal" (docs/event-log.md, `signal`).
void expect_ends_by_signal(const ProcessLog& log, int signal) {
    std::size_t at = log.events.size();
    for (std::size_t i = 0; i < log.events.size(); ++i)
        if (log.events[i]["ev"] == "signal") at = i;
    ASSERT_LT(at, log.events.size());
    for (std::size_t i = at + 1; i + 1 < log.events.size(); ++i)
        EXPECT_EQ(log.events[i]["ev"], "thread_usage_at_exit") << log.events[i].dump();
    const auto& end = log.events.back();
    ASSERT_EQ(end["ev"], "process_end") << end.dump();
    EXPECT_EQ(end["how"], "signal");
    EXPECT_EQ(end["signal"], signal);
    EXPECT_FALSE(end.contains("status"));
    EXPECT_TRUE(end.contains("utime_us")) << end.dump();
    EXPECT_TRUE(end.contains("main_cpu_us")) << end.dump();
}

TEST(PreloadFaults, AbortWithoutAHandlerDiesBySigabrtAndIsRecorded) {
    TempDir out;
    SignalCase c = run_signal_case("abort", out);
    EXPECT_EQ(c.traced.term_signal(), SIGABRT);
    expect_well_formed(c.log);
    expect_complete(c.log);
    EXPECT_EQ(c.log.all("thread_start").size(), 1u);
    auto sig = c.log.first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGABRT");
    EXPECT_EQ((*sig)["disposition"], "default");
    EXPECT_TRUE((*sig)["fatal"].get<bool>());
    EXPECT_EQ((*sig)["sender_pid"], c.log.pid());
    expect_ends_by_signal(c.log, SIGABRT);
}

// abort() runs the application's handler, and when it returns, ends the
// process by SIGABRT anyway (glibc resets the disposition itself).
TEST(PreloadFaults, AbortWithAHandlerThatReturnsStillDiesBySigabrt) {
    TempDir out;
    SignalCase c = run_signal_case("abort-handled", out);
    EXPECT_EQ(c.traced.term_signal(), SIGABRT);
    EXPECT_NE(c.traced.out.find("handled SIGABRT"), std::string::npos);
    expect_well_formed(c.log);
    expect_complete(c.log);  // finished although glibc, not the recorder, re-raised
    auto sig = c.log.first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGABRT");
    EXPECT_EQ((*sig)["disposition"], "handler");
    EXPECT_FALSE(c.log.first("process_end"));
}

TEST(PreloadFaults, SigtermWithoutAHandlerDiesBySigtermAndIsRecorded) {
    TempDir out;
    SignalCase c = run_signal_case("term", out);
    EXPECT_EQ(c.traced.term_signal(), SIGTERM);
    expect_well_formed(c.log);
    expect_complete(c.log);
    auto sig = c.log.first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGTERM");
    EXPECT_EQ((*sig)["signal"], SIGTERM);
    EXPECT_EQ((*sig)["disposition"], "default");
    EXPECT_TRUE((*sig)["fatal"].get<bool>());
    EXPECT_EQ((*sig)["code"], SI_USER);
    EXPECT_EQ((*sig)["sender_pid"], c.log.pid());
    expect_ends_by_signal(c.log, SIGTERM);
}

TEST(PreloadFaults, SigtermWithAHandlerRunsTheHandler) {
    TempDir out;
    SignalCase c = run_signal_case("term-handled", out);
    EXPECT_EQ(c.traced.exit_code(), 9);
    EXPECT_NE(c.traced.out.find("SIGTERM handled"), std::string::npos);
    expect_well_formed(c.log);
    expect_complete(c.log);
    auto sig = c.log.first("signal");
    ASSERT_TRUE(sig);
    EXPECT_EQ((*sig)["name"], "SIGTERM");
    EXPECT_EQ((*sig)["disposition"], "handler");
    EXPECT_FALSE((*sig)["fatal"].get<bool>());
    auto end = c.log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["how"], "exit");
    EXPECT_EQ((*end)["status"], 9);
}

// exit() from a SIGTERM handler that runs on one of four threads that keep
// creating threads (main blocks the signal): atexit handlers still run, the
// end is recorded, and nothing hangs. Repeated: the signal lands at a
// different place each time.
TEST(PreloadFaults, ExitFromASignalHandlerWhileThreadsAreCreated) {
    for (int round = 0; round < 5; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        TempDir out;
        SignalCase c = run_signal_case("exit-in-handler", out);
        EXPECT_EQ(c.traced.exit_code(), 6);
        EXPECT_NE(c.traced.out.find("exit from the handler"), std::string::npos);
        EXPECT_NE(c.traced.out.find("atexit handler ran"), std::string::npos);
        expect_well_formed(c.log);
        EXPECT_LE(c.log.torn_lines, 4u) << "at most the lines of the other threads in flight";
        EXPECT_GT(c.log.all("thread_start").size(), 10u);
        auto sig = c.log.first("signal");
        ASSERT_TRUE(sig);
        EXPECT_EQ((*sig)["name"], "SIGTERM");
        EXPECT_EQ((*sig)["disposition"], "handler");
        EXPECT_NE((*sig)["tid"], c.log.pid()) << "main blocks SIGTERM: a churning thread took it";
        auto end = c.log.first("process_end");
        ASSERT_TRUE(end);
        EXPECT_EQ((*end)["how"], "exit");
        EXPECT_EQ((*end)["status"], 6);
        EXPECT_EQ((*end)["tid"], (*sig)["tid"]);
    }
}

// The signal lands on a thread that is creating threads: about one run in
// forty (idle VM) it interrupts the recorder itself, whose _exit then still
// writes process_end, marked interrupted_recorder (it was left out before,
// and this test failed about one run in eight).
TEST(PreloadFaults, UnderscoreExitFromASignalHandlerWhileThreadsAreCreated) {
    for (int round = 0; round < 10; ++round) {
        SCOPED_TRACE("round " + std::to_string(round));
        TempDir out;
        SignalCase c = run_signal_case("_exit-in-handler", out);
        EXPECT_EQ(c.traced.exit_code(), 7);
        EXPECT_NE(c.traced.out.find("_exit from the handler"), std::string::npos);
        EXPECT_EQ(c.traced.out.find("atexit"), std::string::npos);
        expect_well_formed(c.log);
        EXPECT_LE(c.log.torn_lines, 4u);
        auto sig = c.log.first("signal");
        ASSERT_TRUE(sig);
        EXPECT_EQ((*sig)["name"], "SIGUSR1");
        EXPECT_EQ((*sig)["disposition"], "handler");
        auto end = c.log.first("process_end");
        ASSERT_TRUE(end);
        EXPECT_EQ((*end)["how"], "_exit");
        EXPECT_EQ((*end)["status"], 7);
    }
}

// ---------------------------------------------------------------------------
// vfork and posix_spawn

TEST(PreloadFaults, VforkAndPosixSpawnChildrenAreTracedAsTheirOwnProcesses) {
    RunResult plain = run_untraced({"spawn"});
    ASSERT_EQ(plain.exit_code(), 0) << plain.out << plain.err;
    TempDir out;
    RunResult r = run_fault({"spawn"}, out.path());
    EXPECT_EQ(r.wait_status, plain.wait_status) << r.out << r.err;
    EXPECT_TRUE(recorder_messages(r.err).empty()) << r.err;
    // "spawn: vfork child <pid> exited 5", "spawn: posix_spawn child <pid> exited 5"
    std::map<std::string, int> child_pid;
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        char how[32] = {};
        int pid = 0, status = 0;
        if (std::sscanf(line.c_str(), "spawn: %31s child %d exited %d", how, &pid, &status) == 3) {
            EXPECT_EQ(status, 5) << line;
            child_pid[how] = pid;
        }
    }
    ASSERT_EQ(child_pid.size(), 2u) << r.out;

    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 3u) << describe(logs);
    for (const auto& l : logs) {
        expect_well_formed(l);
        expect_complete(l);
    }
    const ProcessLog* parent = nullptr;
    std::map<int, const ProcessLog*> by_pid;
    for (const auto& l : logs) {
        by_pid[l.pid()] = &l;
        if (l.start()["cmdline"].size() > 1 && l.start()["cmdline"][1] == "spawn") parent = &l;
    }
    ASSERT_NE(parent, nullptr) << describe(logs);
    // The parent is unaffected: no fork events (documented), its own end.
    EXPECT_FALSE(parent->first("fork"));
    EXPECT_FALSE(parent->first("exec"));
    auto end = parent->first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 0);
    EXPECT_EQ(parent->all("thread_start").size(), 0u);
    for (const auto& [how, pid] : child_pid) {
        SCOPED_TRACE(how);
        ASSERT_TRUE(by_pid.count(pid)) << describe(logs);
        const ProcessLog& child = *by_pid[pid];
        EXPECT_EQ(child.image, 0);
        EXPECT_EQ(child.start()["origin"], "exec");
        EXPECT_EQ(child.start()["image"], 0);
        EXPECT_EQ(child.start()["ppid"], parent->pid());
        EXPECT_EQ(child.start()["cmdline"][1], "child");
        EXPECT_EQ(child.all("thread_start").size(), 2u);
        EXPECT_EQ(child.thread_ends().size(), 2u);
        auto child_end = child.first("process_end");
        ASSERT_TRUE(child_end);
        EXPECT_EQ((*child_end)["how"], "exit");
        EXPECT_EQ((*child_end)["status"], 5);
    }
}

// ---------------------------------------------------------------------------
// An OpenMP runtime loaded with dlopen after start (the library-constructor
// case is ThreadFromALibraryConstructorIsRecorded)

TEST(PreloadFaults, ThreadsOfADlopenedOpenMpRuntimeAreRecorded) {
    RunResult plain = run_untraced({"dlopen-gomp"});
    if (plain.exit_code() == 2 && plain.err.find("libgomp") != std::string::npos)
        GTEST_SKIP() << "libgomp.so.1 is not installed: " << plain.err;
    ASSERT_EQ(plain.exit_code(), 0) << plain.out << plain.err;
    TempDir out;
    RunResult r = run_fault({"dlopen-gomp"}, out.path(), {{"OMP_WAIT_POLICY", "passive"}});
    EXPECT_EQ(r.wait_status, plain.wait_status) << r.err;
    EXPECT_EQ(r.out, plain.out);
    EXPECT_NE(r.out.find("4 team members saw 4 threads"), std::string::npos) << r.out;
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    expect_complete(log);
    EXPECT_EQ(log.start()["env"]["OMP_WAIT_POLICY"], "passive");
    auto starts = log.all("thread_start");
    ASSERT_EQ(starts.size(), 3u) << "a team of 4: the main thread and 3 made by libgomp, once";
    std::set<int> seqs;
    for (const auto& s : starts) {
        EXPECT_EQ(base_name(s["creator_module"]), "libgomp.so.1") << s.dump();
        EXPECT_EQ(base_name(s["start_module"]), "libgomp.so.1") << s.dump();
        EXPECT_EQ(s["creator_tid"], log.pid());
        EXPECT_GT(s["t"].get<std::int64_t>(), log.start()["t"].get<std::int64_t>() + 5000000)
            << "created well after start, once the runtime was loaded";
        seqs.insert(s["seq"].get<int>());
    }
    EXPECT_EQ(seqs, (std::set<int>{1, 2, 3}));
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 0);
    EXPECT_EQ((*end)["threads_created"], 3);
    EXPECT_EQ((*end)["threads_untraced"], 0);
}

// ---------------------------------------------------------------------------
// Hostile output directories (a symlink where the host directory or
// topology.xml goes: PlantedSymlinksAreNeverFollowed)

// Every name the recorder would use for the node's files is planted before
// the process starts (its pid is known: it is held before exec): a regular
// file at node.events, a symlink to a file outside OUT at the next name, a
// FIFO at the one after, and symlinks at the topology's temporary name and at
// node.models. Nothing outside OUT is written, nothing planted is replaced or
// truncated, nothing hangs, and the process records under the first free name.
TEST(PreloadFaults, FilesPlantedAtTheNamesALogWouldGetAreNeverTouched) {
    TempDir out, elsewhere;
    const fs::path host = out.path() / host_dir_name();
    fs::create_directory(host);
    Spawned app({example("fault_cases"), "threads", "20"}, out.path());
    const std::string pid = std::to_string(app.pid());

    Sentinel planted = Sentinel::make(host / "node.events", "not a log: the application's own data\n");
    Sentinel victim_log = Sentinel::make(elsewhere.path() / "victim-log", "outside, log\n");
    Sentinel victim_topology = Sentinel::make(elsewhere.path() / "victim-topology", "outside, topology\n");
    Sentinel victim_model = Sentinel::make(elsewhere.path() / "victim-model", "outside, model\n");
    fs::create_symlink(victim_log.path, host / "node.1.events");
    ASSERT_EQ(::mkfifo((host / "node.2.events").c_str(), 0644), 0);
    fs::create_symlink(victim_topology.path, host / ("topology.xml.tmp." + pid));
    fs::create_symlink(victim_model.path, host / "node.models");
    fs::create_symlink(victim_model.path, host / (".node.1.models." + pid + ".tmp"));

    RunResult r = app.finish();
    EXPECT_EQ(r.exit_code(), 6) << r.err;
    EXPECT_NE(r.out.find("threads: 20 threads"), std::string::npos);

    planted.expect_untouched();
    victim_log.expect_untouched();
    victim_topology.expect_untouched();
    victim_model.expect_untouched();
    EXPECT_TRUE(fs::is_symlink(host / "node.1.events"));
    EXPECT_TRUE(fs::is_fifo(host / "node.2.events"));
    EXPECT_TRUE(fs::is_symlink(host / ("topology.xml.tmp." + pid)));
    EXPECT_TRUE(fs::is_symlink(host / "node.models"));

    // The events took the first free name, and the stream is whole.
    const fs::path log_file = host / "node.3.events";
    ASSERT_TRUE(fs::is_regular_file(log_file)) << r.err;
    auto logs = read_node_file_streams(log_file);
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    expect_complete(log);
    EXPECT_EQ(log.start()["log"], "node.3.events");
    EXPECT_EQ(log.all("thread_start").size(), 20u);
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 6);
    // The topology could not be published under its planted temporary name:
    // said in the log. The model went past the planted names to node.2.models.
    auto topology = log.first("topology");
    ASSERT_TRUE(topology);
    EXPECT_FALSE((*topology)["ok"].get<bool>());
    EXPECT_FALSE(fs::exists(host / "topology.xml"));
    auto model = log.first("model");
    ASSERT_TRUE(model);
    EXPECT_TRUE((*model)["ok"].get<bool>()) << model->dump();
    EXPECT_TRUE(fs::is_regular_file(host / "node.2.models"));
}

// OUT is a world-writable sticky directory (mode 1777, like /tmp) owned by
// another user, who made the host directory (also 1777) and planted symlinks
// to files outside OUT at the log's name, at topology.xml, topology.snap and
// its lock. The recorder (root here, so permissions do not stop it) follows
// none of them.
TEST(PreloadFaults, StickySharedDirectoryOwnedByAnotherUser) {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to give files to another user";
    TempDir scratch, elsewhere;
    const uid_t other = 65534;  // nobody
    const fs::path out = scratch.path() / "shared";
    const fs::path host = out / host_dir_name();
    fs::create_directory(out);
    fs::create_directory(host);
    for (const fs::path& d : {out, host}) {
        ASSERT_EQ(::chown(d.c_str(), other, other), 0);
        ASSERT_EQ(::chmod(d.c_str(), 01777), 0);
    }
    Spawned app({example("fault_cases"), "threads", "20"}, out);
    std::vector<Sentinel> victims;
    std::vector<fs::path> links;
    for (const std::string& name : {std::string("node.events"), std::string("topology.xml"), std::string("topology.snap"),
                                   std::string("topology.snap.lock"), std::string("topology.xml.claim")}) {
        victims.push_back(Sentinel::make(elsewhere.path() / ("victim-" + name), "outside: " + name + "\n"));
        links.push_back(host / name);
        fs::create_symlink(victims.back().path, links.back());
        ASSERT_EQ(::lchown(links.back().c_str(), other, other), 0);
    }
    RunResult r = app.finish();
    EXPECT_EQ(r.exit_code(), 6) << r.err;
    EXPECT_NE(r.out.find("threads: 20 threads"), std::string::npos);
    for (const auto& v : victims) v.expect_untouched();
    // topology.snap may be replaced by a real snapshot (rename replaces the
    // link itself, never its target); every other link is still there.
    for (const auto& l : links) {
        if (l.filename() != "topology.snap") {
            EXPECT_TRUE(fs::is_symlink(l)) << l;
        }
    }

    const fs::path log_file = host / "node.1.events";
    ASSERT_TRUE(fs::is_regular_file(log_file)) << r.err;
    struct stat st{};
    ASSERT_EQ(::lstat(log_file.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, ::geteuid()) << "the node file is the recorder's own new file";
    auto logs = read_node_file_streams(log_file);
    ASSERT_EQ(logs.size(), 1u);
    const ProcessLog& log = logs[0];
    expect_well_formed(log);
    expect_complete(log);
    EXPECT_EQ(log.all("thread_start").size(), 20u);
    auto end = log.first("process_end");
    ASSERT_TRUE(end);
    EXPECT_EQ((*end)["status"], 6);
}

// ---------------------------------------------------------------------------
// The traced job never harmed (issue 18): hostile files in the run directory,
// odd bytes in what is recorded, long exec chains

// The first log of the process whose pid is `pid` and whose image is `image`.
const ProcessLog* log_of_image(const std::vector<ProcessLog>& logs, int pid, int image) {
    for (const auto& l : logs)
        if (l.pid() == pid && l.image == image) return &l;
    return nullptr;
}

// Runs `fault_cases threads 20` with its output in `out` and checks what a
// hostile file in the run directory must never change: the application ends
// on time with its own status, nothing of ours reaches its stderr, and its
// one log is whole, with the model written. Returns the model event (null
// after a failure, which is already reported).
nlohmann::json expect_a_timely_whole_run(const fs::path& out) {
    Spawned app({example("fault_cases"), "threads", "20"}, out);
    const auto start = std::chrono::steady_clock::now();
    RunResult r = app.finish(std::chrono::seconds(20));
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.exit_code(), 6) << r.err;
    EXPECT_LT(took, std::chrono::seconds(10));
    EXPECT_TRUE(recorder_messages(r.err).empty()) << r.err;
    auto logs = read_logs(out);
    if (logs.size() != 1u) {
        ADD_FAILURE() << logs.size() << " logs instead of 1";
        return nullptr;
    }
    expect_well_formed(logs[0]);
    expect_complete(logs[0]);
    auto model = logs[0].first("model");
    if (!model) {
        ADD_FAILURE() << "no model event";
        return nullptr;
    }
    EXPECT_TRUE((*model)["ok"].get<bool>()) << model->dump();
    return *model;
}

// A FIFO where the node's topology snapshot goes: opening it for reading
// waited for a writer that never came, and the application hung at exit
// (in the model writer). Now the snapshot is opened without blocking and
// refused as not a regular file; the model is written all the same.
TEST(PreloadFaults, FifoAtTheTopologySnapshotDoesNotHangTheApplication) {
    TempDir out;
    const fs::path host = out.path() / host_dir_name();
    fs::create_directory(host);
    ASSERT_EQ(::mkfifo((host / "topology.snap").c_str(), 0644), 0);
    expect_a_timely_whole_run(out.path());
}

// Another process holds the lock that serialises publishing the snapshot
// (and never lets go): flock(LOCK_EX) waited for it forever. Now the lock is
// tried for a bounded time; the process then finds the topology itself,
// does not publish it, and says so in its log (not on the application's
// stderr).
TEST(PreloadFaults, TopologySnapshotLockHeldElsewhereDoesNotHangTheApplication) {
    TempDir out;
    const fs::path host = out.path() / host_dir_name();
    fs::create_directory(host);
    const int lock_fd = ::open((host / "topology.snap.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(lock_fd, 0);
    ASSERT_EQ(::flock(lock_fd, LOCK_EX), 0);
    const nlohmann::json model = expect_a_timely_whole_run(out.path());
    ::close(lock_fd);
    ASSERT_TRUE(model.is_object());
    EXPECT_NE(model.value("note", "").find("topology.snap.lock"), std::string::npos) << model.dump();
    EXPECT_FALSE(fs::exists(host / "topology.snap"));
}

// The process's own log, renamed away while it runs and replaced by a FIFO:
// the model writer read the log back by its name at exit and hung there.
// Now it opens it without blocking or following links, refuses anything
// but a regular file, and says so in the model event.
TEST(PreloadFaults, FifoInPlaceOfTheOwnLogDoesNotHangTheApplication) {
    TempDir scratch;
    const fs::path out = scratch.path() / "out";
    const fs::path gate = scratch.path() / "gate";
    fs::create_directory(out);
    fs::create_directory(gate);
    Spawned app({example("fault_cases"), "wait-rm"}, out, {{"FAULT_DIR", gate.string()}});
    ASSERT_TRUE(app.wait_for_output("wait-rm: ready"));
    auto before = read_logs(out);
    ASSERT_EQ(before.size(), 1u);
    const fs::path log_file = out / host_dir_name() / "node.events";
    const fs::path moved = scratch.path() / "moved.events";
    fs::rename(log_file, moved);
    ASSERT_EQ(::mkfifo(log_file.c_str(), 0644), 0);
    fs::remove(gate);
    const auto start = std::chrono::steady_clock::now();
    RunResult r = app.finish(std::chrono::seconds(30));
    const auto took = std::chrono::steady_clock::now() - start;
    ASSERT_EQ(r.exit_code(), 5) << r.err;
    EXPECT_LT(took, std::chrono::seconds(20));
    EXPECT_TRUE(fs::is_fifo(log_file));
    // Everything the process recorded is in its file, under its new name.
    auto moved_logs = read_node_file_streams(moved);
    ASSERT_GE(moved_logs.size(), 1u);  // the process's, and its child's
    const ProcessLog& log = moved_logs[0];
    expect_well_formed(log);
    EXPECT_EQ(log.all("thread_start").size(), 2050u);
    auto model = log.first("model");
    ASSERT_TRUE(model);
    EXPECT_FALSE((*model)["ok"].get<bool>());
    EXPECT_NE(model->value("error", "").find("not a regular file"), std::string::npos) << model->dump();
}

// A process that execs itself 120 times (one pid, 121 images): from the
// 100th exec on, no log name was left (".1" to ".99" only) and each image
// ran untraced, saying so on the application's stderr. Now every image is
// recorded, as streams 1 to 121 of the node file, and stderr carries nothing
// of ours.
TEST(PreloadFaults, ExecChainOf120ImagesIsRecordedWholeWithAQuietStderr) {
    TempDir out;
    RunResult r = run_fault({"exec-chain", "120"}, out.path());
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_NE(r.out.find("exec-chain: done"), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 121u) << describe(logs);
    const int pid = logs[0].pid();
    for (int image = 0; image <= 120; ++image) {
        SCOPED_TRACE("image " + std::to_string(image));
        const ProcessLog* log = log_of_image(logs, pid, image);
        ASSERT_NE(log, nullptr) << describe(logs);
        expect_well_formed(*log);
        expect_complete(*log);
        EXPECT_EQ(log->file.filename().string(), "node.events#" + std::to_string(image + 1));
        EXPECT_EQ(log->all("thread_start").size(), 1u);
        EXPECT_EQ(log->all("exec").size(), image < 120 ? 1u : 0u);
    }
}

// Command-line arguments (so the command line and the exec event's argv)
// with bytes that are not UTF-8, control characters (an ANSI colour
// sequence) and a multi-byte character cut by the exec event's 200-byte
// limit: every line of every log is strict JSON, and the text comes back
// with each stray byte read as the Latin-1 character of the same number
// (docs/event-log.md).
TEST(PreloadFaults, ArgumentsThatAreNotUtf8AreWrittenAsStrictJson) {
    TempDir out;
    const std::string invalid = "caf\xe9-\xff\xfe-\xc3\xa9-\xed\xa0\x80-\xc0\xaf";
    const std::string control = "\x1b[31mred\x1b[0m\x01\x7f";
    const std::string cut = std::string(199, 'a') + "\xc3\xa9";  // split at byte 200
    RunResult r = run_fault({"exec-chain", "1", invalid, control, cut}, out.path());
    ASSERT_EQ(r.exit_code(), 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto logs = read_logs(out.path());
    ASSERT_EQ(logs.size(), 2u) << describe(logs);
    for (const auto& log : logs) {
        expect_well_formed(log);  // every line parsed (nlohmann::json::parse, strict)
        expect_complete(log);
    }
    const std::string invalid_as_text = "caf\xc3\xa9-\xc3\xbf\xc3\xbe-\xc3\xa9-\xc3\xad\xc2\xa0\xc2\x80-\xc3\x80\xc2\xaf";
    const ProcessLog* first = log_of_image(logs, logs[0].pid(), 0);
    ASSERT_NE(first, nullptr) << describe(logs);
    const nlohmann::json cmdline = first->start()["cmdline"];
    ASSERT_EQ(cmdline.size(), 6u) << cmdline.dump();
    EXPECT_EQ(cmdline[3].get<std::string>(), invalid_as_text);
    EXPECT_EQ(cmdline[4].get<std::string>(), control);
    EXPECT_EQ(cmdline[5].get<std::string>(), cut);
    auto exec = first->first("exec");
    ASSERT_TRUE(exec);
    const nlohmann::json argv = (*exec)["argv"];
    ASSERT_EQ(argv.size(), 6u) << exec->dump();
    EXPECT_EQ(argv[3].get<std::string>(), invalid_as_text);
    EXPECT_EQ(argv[4].get<std::string>(), control);
    EXPECT_EQ(argv[5].get<std::string>(), std::string(199, 'a') + "\xc3\x83");  // the lone 0xc3
    // No control character is left raw in a line.
    std::ifstream in(first->file, std::ios::binary);
    for (std::string line; std::getline(in, line);)
        for (unsigned char c : line) EXPECT_TRUE(c >= 0x20 && c != 0x7f) << "byte " << int(c) << " in " << line;
}

}  // namespace
}  // namespace stacksage::testing
