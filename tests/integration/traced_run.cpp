#include "tests/integration/traced_run.hpp"

#include "parsers/node_file_reader.hpp"
#include "parsers/run_directory.hpp"

#include "cli/sanitizer_runtime.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace stacksage::testing {

std::string preload_library() { return STACKSAGE_PRELOAD_PATH; }
std::string example(const std::string& name) { return std::string(STACKSAGE_EXAMPLES_DIR) + "/" + name; }
std::string stacksage_binary() { return STACKSAGE_CLI_PATH; }

TempDir::TempDir() {
    std::string templ = (fs::temp_directory_path() / "stacksage-it-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
}

TempDir::~TempDir() {
    std::error_code ec;
    // A test may have made parts read-only.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
}

std::string host_dir_name() {
    struct utsname u{};
    ::uname(&u);
    return u.nodename;
}

bool RunResult::exited() const { return WIFEXITED(wait_status); }
int RunResult::exit_code() const { return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1; }
int RunResult::term_signal() const { return WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0; }

RunResult run(const RunOptions& options) {
    // The environment, built before fork: the child only execs.
    std::map<std::string, std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const char* eq = std::strchr(*e, '=');
        if (eq) env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    }
    env.erase("LD_PRELOAD");
    env.erase("STACKSAGE_OUTPUT");
    for (const auto& name : options.unset_env) env.erase(name);
    if (options.preload) {
        // A sanitized build's recorder needs its runtime (no-op otherwise).
        env["LD_PRELOAD"] = cli::with_sanitizer_runtime(preload_library());
        if (const char* variable = cli::sanitizer_options_variable())
            env[variable] = cli::sanitizer_options_for_traced_programs(env[variable]);
        if (options.output) env["STACKSAGE_OUTPUT"] = options.output->string();
    }
    for (const auto& [k, v] : options.env) env[k] = v;
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = options.argv;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    cpu_set_t mask;
    CPU_ZERO(&mask);
    if (options.affinity)
        for (unsigned cpu : *options.affinity) CPU_SET(cpu, &mask);

    int out_pipe[2], err_pipe[2];
    if (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe failed");
    pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
        ::dup2(out_pipe[1], 1);
        ::dup2(err_pipe[1], 2);
        if (options.affinity && ::sched_setaffinity(0, sizeof mask, &mask) != 0) ::_exit(125);
        if (options.cwd && ::chdir(options.cwd->c_str()) != 0) ::_exit(126);
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);

    RunResult result;
    auto deadline = std::chrono::steady_clock::now() + options.timeout;
    OutputPipes pipes(out_pipe[0], err_pipe[0], &result);
    bool killed = false;
    while (pipes.open()) {
        int wait_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           deadline - std::chrono::steady_clock::now())
                                           .count());
        if (wait_ms <= 0) {
            if (!killed) ::kill(pid, SIGKILL);
            killed = true;
            wait_ms = 1000;
            deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        }
        pipes.pump(wait_ms);
    }
    while (::waitpid(pid, &result.wait_status, 0) < 0 && errno == EINTR) {
    }
    if (killed) result.err += "\n[test harness: killed after timeout]\n";
    return result;
}

OutputPipes::~OutputPipes() {
    for (int fd : fds_)
        if (fd >= 0) ::close(fd);
}

bool OutputPipes::pump(int ms) {
    if (!open()) return false;
    pollfd polled[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
    if (::poll(polled, 2, ms) <= 0) return true;  // nothing yet, or EINTR: the caller comes back
    std::string* sinks[2] = {&into_->out, &into_->err};
    for (int i = 0; i < 2; ++i) {
        if (fds_[i] < 0 || !(polled[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
        char buf[4096];
        const ssize_t got = ::read(fds_[i], buf, sizeof buf);
        if (got > 0) {
            sinks[i]->append(buf, static_cast<std::size_t>(got));
        } else if (got == 0 || errno != EINTR) {
            ::close(fds_[i]);
            fds_[i] = -1;
        }
    }
    return open();
}

const nlohmann::json& ProcessLog::start() const {
    static const nlohmann::json empty = nlohmann::json::object();
    return events.empty() ? empty : events.front();
}

std::vector<nlohmann::json> ProcessLog::all(const std::string& event) const {
    std::vector<nlohmann::json> out;
    for (const auto& e : events)
        if (e.value("ev", "") == event) out.push_back(e);
    return out;
}

std::vector<nlohmann::json> ProcessLog::thread_ends() const {
    std::vector<nlohmann::json> out;
    for (const auto& e : events) {
        const std::string ev = e.value("ev", "");
        if (ev == "thread_end") {
            out.push_back(e);
        } else if (ev == "thread_start" && e.contains("end_t")) {
            nlohmann::json end = {{"v", e["v"]}, {"ev", "thread_end"}, {"t", e["end_t"]}, {"pid", e["pid"]},
                                  {"tid", e["tid"]}, {"how", e["how"]}, {"seq", e["seq"]},
                                  {"short_lived", true}, {"cpu", e["end_cpu"]}, {"duration_ns", e["duration_ns"]}};
            out.push_back(std::move(end));
        }
    }
    return out;
}

std::optional<nlohmann::json> ProcessLog::first(const std::string& event) const {
    for (const auto& e : events)
        if (e.value("ev", "") == event) return e;
    return std::nullopt;
}

int ProcessLog::pid() const { return start().value("pid", -1); }

namespace {

ProcessLog log_from_text(const std::string& text, const fs::path& file) {
    ProcessLog log;
    log.file = file;
    log.nul_bytes = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\0'));
    // As the analyzer's reader (docs/event-log.md): NUL runs are skipped; the
    // text before a line's last NUL is what is left of torn lines.
    std::vector<std::string> lines;
    std::vector<bool> after_nul;
    std::istringstream split(text);
    for (std::string line; std::getline(split, line);) {
        const bool had_nul = line.find('\0') != std::string::npos;
        if (const auto nul = line.rfind('\0'); nul != std::string::npos) {
            for (std::size_t i = 0; i < nul;) {
                const std::size_t j = line.find('\0', i);
                if (j > i) ++log.torn_lines;
                i = j + 1;
            }
            line.erase(0, nul + 1);
            if (line.empty()) continue;
        }
        lines.push_back(line);
        after_nul.push_back(had_nul);
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        try {
            log.events.push_back(nlohmann::json::parse(lines[i]));
        } catch (const nlohmann::json::parse_error& e) {
            if (after_nul[i])
                ++log.torn_lines;  // the end of a line whose start was never copied
            else if (i + 1 == lines.size())
                log.torn_last_line = true;
            else
                log.errors.push_back(file.filename().string() + " line " + std::to_string(i + 1) +
                                     ": " + e.what());
        }
    }
    return log;
}

std::string file_text(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream whole;
    whole << in.rdbuf();
    return whole.str();
}

}  // namespace

ProcessLog read_log(const fs::path& file) { return log_from_text(file_text(file), file); }

std::vector<ProcessLog> read_node_file_streams(const fs::path& file) {
    std::vector<ProcessLog> logs;
    Result<NodeFile> node = parse_node_file(file_text(file), file.string(), formats::node_file::FileKind::events);
    if (!node) throw std::runtime_error(node.error().message);
    std::map<std::int64_t, int> images_of_pid;
    for (const NodeStream& s : node->streams) {
        ProcessLog log = log_from_text(std::string(s.text), fs::path(file.string() + "#" + std::to_string(s.stream)));
        log.stream_ended = s.ended;
        log.image = images_of_pid[s.pid]++;
        logs.push_back(std::move(log));
    }
    return logs;
}

std::string model_text_of(const ProcessLog& log) {
    const std::string name = log.file.filename().string();
    const std::size_t hash = name.find('#');
    if (hash == std::string::npos) return {};
    const std::uint64_t stream = std::stoull(name.substr(hash + 1));
    const fs::path models = log.file.parent_path() / "node.models";
    Result<NodeFile> node = parse_node_file(file_text(models), models.string(), formats::node_file::FileKind::models);
    if (!node) return {};
    for (const NodeStream& s : node->streams)
        if (s.of_stream == stream) return std::string(s.text);
    return {};
}

std::vector<ProcessLog> read_logs(const fs::path& out) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& host : fs::directory_iterator(out, ec)) {
        if (!host.is_directory()) continue;
        for (const auto& f : fs::directory_iterator(host.path()))
            if (f.path().extension() == ".jsonl" ||
                is_node_file_name(f.path().filename().string(), formats::node_file::FileKind::events))
                files.push_back(f.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<ProcessLog> logs;
    for (const auto& f : files) {
        if (f.extension() == ".jsonl") {
            logs.push_back(read_log(f));
            if (!logs.back().events.empty()) logs.back().image = logs.back().start().value("image", 0);
            continue;
        }
        for (ProcessLog& log : read_node_file_streams(f)) logs.push_back(std::move(log));
    }
    return logs;
}

std::string base_name(const nlohmann::json& value) {
    if (!value.is_string()) return {};
    return fs::path(value.get<std::string>()).filename().string();
}

Cpuset cpuset_of(const nlohmann::json& value) {
    if (!value.is_string()) return {};
    auto set = Cpuset::parse_list(value.get<std::string>());
    if (!set) throw std::runtime_error("not a cpuset: " + value.dump());
    return *set;
}

Cpuset own_affinity() {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    ::sched_getaffinity(0, sizeof mask, &mask);
    Cpuset set;
    for (unsigned c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &mask)) set.set(c);
    return set;
}

unsigned core_count(const Cpuset& set) {
    std::set<std::string> cores;
    for (unsigned cpu : set) {
        std::ifstream in("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/core_cpus_list");
        std::string siblings;
        if (!(in >> siblings)) siblings = std::to_string(cpu);
        cores.insert(siblings);
    }
    return static_cast<unsigned>(cores.size());
}

void add_preload_environment(std::map<std::string, std::string>& env,
                             const std::optional<fs::path>& output) {
    env["LD_PRELOAD"] = cli::with_sanitizer_runtime(preload_library());
    if (const char* variable = cli::sanitizer_options_variable())
        env[variable] = cli::sanitizer_options_for_traced_programs(env[variable]);
    if (output) env["STACKSAGE_OUTPUT"] = output->string();
}

}  // namespace stacksage::testing
