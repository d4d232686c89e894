// Running programs under the preload and reading back what they recorded:
// the shared helpers of the integration tests.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/cpuset.hpp"

namespace stacksage::testing {

namespace fs = std::filesystem;

// Paths configured by CMake.
std::string preload_library();
std::string example(const std::string& name);  // an examples/ program
std::string stacksage_binary();

// A fresh, empty directory, removed when the object goes.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

struct RunOptions {
    std::vector<std::string> argv;
    std::map<std::string, std::string> env;     // set (or replace) in the child
    std::vector<std::string> unset_env;         // removed in the child
    bool preload = true;                        // LD_PRELOAD the recorder
    std::optional<fs::path> output;             // STACKSAGE_OUTPUT, when preloading
    std::optional<Cpuset> affinity;             // the child's CPU mask before exec
    std::optional<fs::path> cwd;                // the child's working directory
    std::chrono::seconds timeout{60};
};

struct RunResult {
    int wait_status = 0;
    std::string out;   // stdout
    std::string err;   // stderr
    bool exited() const;
    int exit_code() const;       // -1 unless exited()
    int term_signal() const;     // 0 unless killed by a signal
};

// A child's stdout and stderr pipes, read into a RunResult as output comes.
// Owns the two read ends and closes them at EOF or destruction.
class OutputPipes {
public:
    OutputPipes(int out_fd, int err_fd, RunResult* into) : fds_{out_fd, err_fd}, into_(into) {}
    ~OutputPipes();
    OutputPipes(const OutputPipes&) = delete;
    OutputPipes& operator=(const OutputPipes&) = delete;

    // Waits up to `ms` for output and appends what came.
    // \return false once both pipes are at end of file (the child and all
    //         its descendants closed them), true otherwise.
    bool pump(int ms);
    bool open() const { return fds_[0] >= 0 || fds_[1] >= 0; }

private:
    int fds_[2];
    RunResult* into_;
};

// The name of this host's folder in an output directory (OUT/<host>/).
std::string host_dir_name();

// fork + exec with stdout and stderr captured; kills the child at the timeout.
RunResult run(const RunOptions& options);

// One process's event log.
struct ProcessLog {
    fs::path file;                    // a .jsonl, or a node file's stream: "<OUT>/<host>/node.events#N"
    bool stream_ended = true;         // a node file's stream: its end was recorded (not killed)
    // 0, or n for the pid's n-th image after exec: in a node file, the
    // place among the pid's streams (the order they were opened); in an
    // earlier-layout log, process_start's "image".
    int image = 0;
    std::vector<nlohmann::json> events;
    bool torn_last_line = false;      // the last line did not parse (tolerated)
    std::vector<std::string> errors;  // lines before the last that did not parse
    std::size_t torn_lines = 0;       // pieces of lines cut by NUL bytes (a killed process)
    std::size_t nul_bytes = 0;        // NUL bytes in the file (none after a normal exit)

    const nlohmann::json& start() const;  // the process_start event (first line)
    std::vector<nlohmann::json> all(const std::string& event) const;
    // Every thread's end, in log order, as thread_end says it: a thread that
    // ended within 1 ms of its start has no thread_end, its thread_start
    // carries its end (end_t), which is given here as the short-lived
    // thread_end it stands for (t, cpu, short_lived: true).
    std::vector<nlohmann::json> thread_ends() const;
    std::optional<nlohmann::json> first(const std::string& event) const;
    int pid() const;
};

ProcessLog read_log(const fs::path& file);
// Every stream of a node file (OUT/<host>/node.events), in stream order.
std::vector<ProcessLog> read_node_file_streams(const fs::path& file);
// Every stream of every node.events (and every *.jsonl of the earlier
// layout) under OUT/<host>/, by file name, then stream.
std::vector<ProcessLog> read_logs(const fs::path& out);

// The process model written for a log of a node file (its stream of the
// node's node.models, linked to the log's stream), as text; "" when none.
std::string model_text_of(const ProcessLog& log);

// Base name of a path-valued field ("/lib/x86_64-linux-gnu/libgomp.so.1" -> "libgomp.so.1"),
// empty for null.
std::string base_name(const nlohmann::json& value);
// A cpuset-valued field, parsed.
Cpuset cpuset_of(const nlohmann::json& value);
// The CPUs the test process may use.
Cpuset own_affinity();
// Number of distinct cores among the CPUs in set (from sysfs).
unsigned core_count(const Cpuset& set);

// Sets in env what a traced program needs (LD_PRELOAD with the recorder, and
// a sanitized build's runtime and options as run() sets them), and
// STACKSAGE_OUTPUT when output is given: for tests that start programs
// themselves (test_preload_faults.cpp, test_preload_stress.cpp).
void add_preload_environment(std::map<std::string, std::string>& env,
                             const std::optional<fs::path>& output);

}  // namespace stacksage::testing
