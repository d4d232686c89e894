// The run directory `stacksage run` claims and the recorder fills, known in
// one place: its layout, its scan, its run.json (written by `stacksage run`,
// read by the loader), the claim on it, and the job and rank that name and
// share it.
//
//   OUT/run.json                       what was run (written whole, once: the claim)
//   OUT/<host>/                        one directory per host (its name: the node's)
//   OUT/<host>/node.events             the event logs of the node's process images, one
//                                      stream each (node_file_reader.hpp)
//   OUT/<host>/node.samples            their sampling summaries, one stream each
//   OUT/<host>/node.models             their process models, one stream each
// and, in the earlier layout (still read; a directory may mix both):
//   OUT/<host>/[rank-R.]pid-N.jsonl    one event log per process image; a pid's next
//   OUT/<host>/[rank-R.]pid-N.M.jsonl  image, when the name is taken, gets number M
//   OUT/<host>/<log stem>.samples.jsonl  the sampling summary next to its log
//   OUT/<host>/<log stem>.model.json   the process's own model, written at exit
//   OUT/<host>/topology.xml            the node's hwloc topology, written once
//   OUT/<host>/topology.snap           the node's topology snapshot, mapped by readers
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/formats/node_file_format.hpp"
#include "core/formats/run_layout.hpp"
#include "core/result.hpp"

namespace stacksage {

// ---- the layout -------------------------------------------------------------

// The file names are the recorder's too (core/formats/run_layout.hpp).
namespace run_layout {
inline constexpr std::string_view kRunJson = formats::run_layout::kRunJson;
inline constexpr std::string_view kTopologyXml = formats::run_layout::kTopologyXml;
inline constexpr std::string_view kTopologySnapshot = formats::run_layout::kTopologySnapshot;
inline constexpr std::string_view kRankPrefix = formats::run_layout::kRankPrefix;
inline constexpr std::string_view kPidPrefix = formats::run_layout::kPidPrefix;
inline constexpr std::string_view kEventLogSuffix = formats::run_layout::kEventLogSuffix;
inline constexpr std::string_view kSamplesSuffix = formats::run_layout::kSamplesSuffix;
inline constexpr std::string_view kModelSuffix = formats::run_layout::kModelSuffix;
inline constexpr std::string_view kDefaultNamePrefix = "stacksage-";
}  // namespace run_layout

// The numbers in an event log's name, "rank-0003.pid-4711.jsonl" (rank 3,
// pid 4711); -1 for one the name lacks.
struct LogFileName {
    std::int64_t pid = -1;
    std::int64_t rank = -1;
};
LogFileName parse_log_file_name(std::string_view name);

// Event logs only: *.jsonl, not the sampling summaries next to them.
bool is_event_log_name(std::string_view name);

// The image number in a log's file name: N in "pid-4711.N.jsonl" (the
// recorder's name for the pid's next image when the first is taken), else 0.
std::int64_t image_number(std::string_view file);

// A log's name without its ".jsonl" (a name without it is its own stem):
// the files written next to the log share it.
std::string_view log_stem(std::string_view log);

// The sampling summary's name next to a log: "n01/pid-7.jsonl" gives
// "n01/pid-7.samples.jsonl" (the log's path keeps its folders).
std::string samples_file_of(std::string_view log);

// The process model's name next to a log: "pid-7.jsonl" gives "pid-7.model.json".
std::string model_file_of(std::string_view log);

// "n2" before "n10": digit runs compare as numbers. The order of hosts, and
// of the notes about them.
bool natural_less(std::string_view a, std::string_view b);

// True for a node file's name of `kind` ("node.events", "node.1.events").
bool is_node_file_name(std::string_view name, formats::node_file::FileKind kind);

// The name under which notes give a node file's stream: "n01/node.events#17".
std::string node_stream_label(std::string_view node_file, std::uint64_t stream);

// ---- the scan ---------------------------------------------------------------

// One process's logs (images before and after exec share the pid).
struct ProcessLogs {
    std::int64_t pid = -1;
    std::int64_t rank = -1;            // from the file names, for ordering
    std::vector<std::string> files;    // relative to OUT ("<host>/<name>")
};

struct ScannedHost {
    std::string name;
    std::filesystem::path path;
    std::vector<ProcessLogs> processes;  // ranks first, in rank order; then by pid
    bool has_topology_file = false;
    std::unordered_set<std::string> sample_files;  // relative to OUT (earlier layout)
    std::vector<std::string> node_event_files;     // node.events (node.1.events, ...), relative to OUT
    std::vector<std::string> node_sample_files;    // node.samples (...), relative to OUT
};

struct RunDirectoryScan {
    std::vector<ScannedHost> hosts;  // holding logs or a topology.xml, in natural order
    std::size_t logs = 0;            // event-log files, node event files included
    // What a model of the run reserves for (run_loader): the bytes of the logs
    // the reader will read (regular files under their size limit).
    std::uintmax_t log_bytes = 0;
    struct UnreadableHost {
        std::string name;
        std::string error;  // the system's message ("Permission denied")
    };
    std::vector<UnreadableHost> unreadable_hosts;  // in the directory's order
};

// Scans OUT for its hosts and their logs, without reading them. Whatever an
// entry named as a log is (a FIFO, a directory, a link to /dev/zero), it is
// listed: its reader refuses it by name (input_file.hpp), rather than the run
// losing a process without a word.
//
// \return the hosts, their logs grouped by pid, and the host directories that
//         could not be read.
// \return an Error when out_dir does not exist, is not a directory, cannot be
//         read, or holds no event log (when host directories could not be
//         read, the Error gives their error).
Result<RunDirectoryScan> scan_run_directory(const std::string& out_dir);

// ---- run.json ---------------------------------------------------------------

// The parallel launcher `stacksage run` started (cli/launcher_forwarding):
// what a report needs to tell hosts that ran ranks but recorded nothing.
struct LaunchRecord {
    std::string launcher;                // "openmpi", "mpich-hydra", "intel-mpi", "flux", "srun", "unknown-remote"
    std::string program;                 // as the command named it: "mpirun"
    std::string remote_ranks;            // "forwarded", "inherited", "not-forwarded"
    std::string forwarded_by;            // "OMPI_MCA_mca_base_env_list", "-x", "-genv", ...
    std::vector<std::string> variables;  // what the launcher carries to its ranks
    std::vector<std::string> hosts;      // named by -H/-hosts and the host file, else the batch allocation's
    std::string hosts_from;              // "command", "SLURM_JOB_NODELIST", "PBS_NODEFILE"; "": unknown
    std::string hostfile;                // "" when none
    long processes = -1;                 // -np / -n / --ntasks; -1: not given
    long nodes = -1;                     // Flux's -N; -1: not given
    std::vector<std::string> command;    // the command as run, after forwarding was added
};

// What `stacksage run` writes into OUT/run.json.
struct RunRecord {
    std::vector<std::string> command;
    std::string start_iso8601;         // "2026-11-25T22:34:56Z"
    std::int64_t start_realtime_ns = 0;
    std::string tool_version;
    std::string host;
    std::string cwd;
    std::string output;                // OUT, absolute
    bool topology = true;              // --no-topology not given
    bool model = true;                 // --no-model not given
    std::string sample = "off";        // --sample
    std::string preload;               // the recorder's path
    std::string job_id;                // "" outside a job (written as null)
    std::optional<LaunchRecord> launch;  // null when the command is no launcher
    // Programs of the command LD_PRELOAD cannot enter (statically linked,
    // set-user-ID, file capabilities: cli/unrecordable_program.hpp), each a
    // sentence saying which, why and what to do; written as "unrecordable".
    std::vector<std::string> unrecordable;
};

// \return run.json's text for `record` (indented JSON, one trailing newline).
std::string run_record_text(const RunRecord& record);

// What the loader reads back from run.json: each field only when it is there
// with the right type.
struct RunRecordFields {
    std::optional<std::vector<std::string>> command;  // its string elements
    std::optional<std::string> start_iso8601;
    std::optional<std::string> tool_version;
    std::optional<std::string> job_id;
    std::optional<int> version;
    std::optional<LaunchRecord> launch;  // when run.json has a launch object
    std::vector<std::string> unrecordable;  // its string elements
};

struct RunRecordRead {
    enum class Problem : std::uint8_t {
        None,
        Missing,      // no run.json (a run preloaded by hand)
        Unreadable,   // not a regular file, too large, a link to nothing, an I/O error (reason says)
        NotAnObject,  // not a JSON object: corrupt or truncated
    };
    Problem problem = Problem::None;
    std::string reason;  // for Unreadable
    RunRecordFields fields;
};

// Reads OUT/run.json through input_file.hpp.
// \return the fields, or the problem that kept them from being read.
RunRecordRead read_run_record(const std::string& out_dir);

// ---- the claim --------------------------------------------------------------

enum class RunDirectoryClaim {
    Ours,     // this run wrote run.json: the directory is its own
    Joined,   // run.json is from another rank of this run's job: shared, as the ranks of one job share it
    Taken,    // run.json is from another run
    Failed,   // the directory cannot be used (error says why)
};

// Claims directory `out` for a run by publishing its run.json there
// (creating `out` first): written whole under a temporary name, then linked
// to run.json, which fails when run.json exists. Of runs that start at once
// into one directory, exactly one gets it, and the others read a complete
// run.json. A run that is one rank of a job (job_id not empty, is_rank) joins
// a directory whose run.json records that job.
RunDirectoryClaim claim_run_directory(const std::filesystem::path& out, const std::string& run_json,
                                      const std::string& job_id, bool is_rank, std::string& error);

// ---- the job and the rank ---------------------------------------------------

// The environment a detection reads; std::getenv by default.
using EnvironmentLookup = std::function<const char*(const char*)>;
const char* process_environment(const char* name);

// The job a process belongs to, when a launcher or batch system says so
// (launcher_environment.hpp): "<SLURM_JOB_ID>.<SLURM_STEP_ID>", or the
// first of the others set; characters that do not belong in a directory
// name become '_'.
// \return the job id, or "" outside a job.
std::string job_id_from_environment(const EnvironmentLookup& getenv = process_environment);

// \return the rank a launcher gave the process (the first rank variable
//         holding a whole number), or -1 when none does.
long rank_from_environment(const EnvironmentLookup& getenv = process_environment);

// The default run directory's name: stacksage-<job id>, or
// stacksage-<YYYYmmdd-HHMMSS> (local time `now`) outside a job; the n-th
// try when it is taken (n >= 2) adds "-n".
std::string default_run_directory_name(const std::string& job_id, std::time_t now, int n = 1);

}  // namespace stacksage
