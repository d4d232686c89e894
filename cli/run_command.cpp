// `stacksage run [options] -- COMMAND...`: runs COMMAND with the recorder
// preloaded, so that it and every process it starts (mpirun's ranks, forked
// and exec'ed children) write their events under one output directory.
//
// Works as `stacksage run -- mpirun -np 4 ./app` (locally launched ranks
// inherit LD_PRELOAD and STACKSAGE_OUTPUT; the launcher is made to carry
// them to its ranks on other hosts: launcher_forwarding.hpp, and for srun,
// salloc and sbatch srun_forwarding.hpp), as `mpirun -np 4 stacksage run --
// ./app` and as `srun stacksage run -- ./app`: the default directory is then
// named after the job, so all ranks share it.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>
#include <set>
#include <string>
#include <vector>

#include "core/plural.hpp"
#include "cli/command_output.hpp"
#include "cli/commands.hpp"
#include "cli/launcher_forwarding.hpp"
#include "cli/loadable_preload.hpp"
#include "cli/preload_location.hpp"
#include "cli/sanitizer_runtime.hpp"
#include "cli/unrecordable_program.hpp"
#include "parsers/run_census.hpp"
#include "parsers/run_directory.hpp"
#include "preload/sampling/sampling_plan.hpp"
#include "preload/sampling/papi_counters.hpp"

namespace stacksage::cli {

namespace {

namespace fs = std::filesystem;

struct RunOptions {
    std::string output;
    std::vector<std::string> command;
    bool no_topology = false;
    bool no_model = false;
    bool quiet = false;
    std::string sample = "off";  // --sample: off, auto, or a list of backends
    std::string live;            // --live (on, off): warnings while the job runs; "": as STACKSAGE_LIVE says
    double live_hold = 0;        // --live-hold: seconds a condition holds before its warning; 0: as STACKSAGE_LIVE_HOLD says
};

std::string env_or_empty(const char* name) {
    const char* v = std::getenv(name);
    return v ? std::string(v) : std::string();
}

// The job this `stacksage run` belongs to, when a launcher or batch system
// says so; empty otherwise.
std::string job_id() { return job_id_from_environment(); }

// Rank of this `stacksage run` when it was started by a launcher (one per
// rank), -1 otherwise.
long launcher_rank() { return rank_from_environment(); }

std::string host_name() {
    struct utsname u{};
    return uname(&u) == 0 ? std::string(u.nodename) : std::string("unknown-host");
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
    std::time_t secs = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// run.json's record of the launcher, so that a report can tell hosts that
// ran ranks but recorded nothing.
std::optional<LaunchRecord> launch_record(const LaunchPlan& plan) {
    if (plan.kind == LauncherKind::None) return std::nullopt;
    LaunchRecord r;
    r.launcher = launcher_kind_word(plan.kind);
    r.program = plan.program;
    r.remote_ranks = remote_recording_word(plan.remote);
    r.forwarded_by = plan.how;
    r.variables = plan.forwarded_variables;
    r.hosts = plan.hosts;
    r.hosts_from = plan.hosts_from;
    r.hostfile = plan.hostfile;
    r.processes = plan.processes;
    r.nodes = plan.nodes;
    r.command = plan.command;
    return r;
}

// OUT/run.json: what was run, when, how.
std::string run_json_text(const fs::path& out, const RunOptions& o, const std::string& preload,
                          const LaunchPlan& plan, const std::vector<UnrecordableProgram>& unrecordable) {
    auto now = std::chrono::system_clock::now();
    RunRecord record;
    record.command = o.command;
    record.start_iso8601 = iso8601_utc(now);
    record.start_realtime_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
    record.tool_version = STACKSAGE_VERSION;
    record.host = host_name();
    std::error_code ec;
    record.cwd = fs::current_path(ec).string();
    record.output = out.string();
    record.topology = !o.no_topology;
    record.model = !o.no_model;
    record.sample = o.sample;
    record.preload = preload;
    record.job_id = job_id();
    record.launch = launch_record(plan);
    for (const UnrecordableProgram& u : unrecordable) record.unrecordable.push_back(u.message);
    return run_record_text(record);
}

// What sampling can do on this node, said once before the run: each rank
// decides for its own node again (nodes may differ), and writes what it did
// into its log and summary.
void explain_sampling_here(const sampling::BackendSelection& selection, CommandOutput& output) {
    using namespace sampling;
    auto scan = std::make_unique<PmuScan>();
    scan_pmus(nullptr, *scan);
    SystemFacts facts;
    read_system_facts(nullptr, facts);
    PapiCounters papi;
    const bool papi_ok = selection.wants(Backend::Papi) && papi.initialise();
    auto plan = std::make_unique<SamplingPlan>();
    SamplingOptions options;
    if (!options_from_environment(options, nullptr, 0)) options = SamplingOptions{};
    options.selection = selection;
    plan_sampling(*scan, facts, options,
                  papi_ok ? nullptr : (selection.wants(Backend::Papi) ? papi.reason() : "not requested"), *plan);
    std::string used;
    for (int i = 0; i < kBackendCount; ++i)
        if (plan->usable(selection) & (1u << i)) used += (used.empty() ? "" : ", ") + std::string(backend_name(static_cast<Backend>(i)));
    output.say(fmt::format("sampling on {} with {}", host_name(), used.empty() ? "nothing" : used));
    for (int i = 0; i < kBackendCount; ++i) {
        const Backend b = static_cast<Backend>(i);
        if (!selection.wants(b) || plan->of(b).available) continue;
        // "auto" takes what works: unavailable backends are a note, not a problem.
        output.say(fmt::format("  {} {}: {}", backend_name(b), selection.automatic ? "not used" : "unavailable",
                               plan->of(b).reason));
    }
}

// The variables `stacksage run` sets for the command, as they were before,
// so that a run that falls back to untraced leaves the command's
// environment as the user gave it.
class SavedEnvironment {
public:
    explicit SavedEnvironment(std::vector<std::string> names) {
        for (auto& n : names) {
            const char* v = std::getenv(n.c_str());
            saved_.push_back({std::move(n), v ? std::optional<std::string>(v) : std::nullopt});
        }
    }
    void restore() const {
        for (const auto& [name, value] : saved_) {
            if (value) setenv(name.c_str(), value->c_str(), 1);
            else unsetenv(name.c_str());
        }
    }

private:
    std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

void prepend_preload(const std::string& preload) {
    std::string existing = env_or_empty("LD_PRELOAD");
    if (existing.find(preload) != std::string::npos) return;  // nested `stacksage run`
    std::string value = existing.empty() ? preload : preload + ":" + existing;
    setenv("LD_PRELOAD", with_sanitizer_runtime(value).c_str(), 1);
    // A sanitized build of stacksage (make test's) only: see sanitizer_runtime.hpp.
    if (const char* variable = sanitizer_options_variable())
        setenv(variable, sanitizer_options_for_traced_programs(env_or_empty(variable)).c_str(), 1);
}

volatile sig_atomic_t g_child = 0;

// Forwards signals sent to us by another process (kill, a batch system) to
// the command. Signals from the terminal (Ctrl-C: si_code SI_KERNEL) already
// reach the command, which is in our process group: forwarding them would
// deliver them twice.
void forward_signal(int sig, siginfo_t* info, void*) {
    const bool from_process = info != nullptr && (info->si_code == SI_USER || info->si_code == SI_QUEUE ||
                                                  info->si_code == SI_TKILL);
    pid_t child = g_child;
    if (child > 0 && from_process) ::kill(child, sig);
}

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

void install_forwarding() {
    struct sigaction sa{};
    sa.sa_sigaction = &forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : kForwardedSignals) sigaction(sig, &sa, nullptr);
}

struct sigaction g_original_sigpipe {};

// Runs the command and waits for it.
// \return its wait status, or -1 when it could not be started or waited for
//         (said on output).
int spawn_and_wait(const std::vector<std::string>& command, CommandOutput& output) {
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);

    install_forwarding();
    // Held from before the fork until the child's pid is known: a signal
    // that came in between would find no child to forward to, and be lost.
    sigset_t forwarded, before;
    sigemptyset(&forwarded);
    for (int sig : kForwardedSignals) sigaddset(&forwarded, sig);
    ::sigprocmask(SIG_BLOCK, &forwarded, &before);
    pid_t child = ::fork();
    if (child < 0) {
        const int error = errno;
        ::sigprocmask(SIG_SETMASK, &before, nullptr);
        output.say(std::string("cannot start a process: ") + std::strerror(error));
        return -1;
    }
    if (child == 0) {
        for (int sig : kForwardedSignals) ::signal(sig, SIG_DFL);
        ::sigaction(SIGPIPE, &g_original_sigpipe, nullptr);  // as the caller gave it
        ::sigprocmask(SIG_SETMASK, &before, nullptr);
        ::execvp(argv[0], argv.data());
        int error = errno;
        // Only async-signal-safe calls from here.
        const char* msg = std::strerror(error);
        const char prefix[] = "stacksage run: cannot run '";
        (void)!::write(2, prefix, sizeof prefix - 1);
        (void)!::write(2, argv[0], std::strlen(argv[0]));
        (void)!::write(2, "': ", 3);
        (void)!::write(2, msg, std::strlen(msg));
        (void)!::write(2, "\n", 1);
        ::_exit(error == ENOENT ? 127 : 126);
    }
    g_child = child;
    ::sigprocmask(SIG_SETMASK, &before, nullptr);  // what came meanwhile is forwarded now
    int status = 0;
    while (::waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            output.say(std::string("waiting for the command failed: ") + std::strerror(errno));
            g_child = 0;
            return -1;
        }
    }
    g_child = 0;
    return status;
}

// Whether a core of stacksage would be a file of its own, not one that
// replaces the command's: core_pattern pipes to a handler or names the pid.
bool own_core_would_be_separate() {
    std::ifstream pattern_file("/proc/sys/kernel/core_pattern");
    std::string pattern;
    if (!std::getline(pattern_file, pattern)) return false;
    if (!pattern.empty() && pattern[0] == '|') return true;
    if (pattern.find("%p") != std::string::npos || pattern.find("%P") != std::string::npos) return true;
    std::ifstream uses_pid_file("/proc/sys/kernel/core_uses_pid");
    int uses_pid = 0;
    return uses_pid_file >> uses_pid && uses_pid == 1;
}

// Ends stacksage the way the command ended, killed by signal `sig`, so that
// the shell or batch system above sees the command's wait status (the
// core-dump flag included: stacksage dumps core only when the command did
// and its core cannot replace the command's).
// \return 128 + sig, the shell's convention, where the signal did not end
//         stacksage (a signal whose default action is not to terminate).
int end_by_signal(int sig, bool command_dumped_core) {
    struct rlimit core {};
    if (::getrlimit(RLIMIT_CORE, &core) == 0) {
        if (!command_dumped_core || !own_core_would_be_separate()) core.rlim_cur = 0;
        else if (core.rlim_cur == 0) core.rlim_cur = core.rlim_max;
        ::setrlimit(RLIMIT_CORE, &core);
    }
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, sig);
    ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
    ::raise(sig);
    return 128 + sig;
}

// "0-3,7" from sorted numbers.
std::string compact_ranks(const std::vector<std::int64_t>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        out += (out.empty() ? "" : ",") + std::to_string(v[i]) + (j > i ? "-" + std::to_string(v[j]) : "");
        i = j + 1;
    }
    return out;
}

// What was recorded, counted the way the report will count it: processes
// (with their ranks) and launchers, not log files; a process that exec'ed
// left a log of what it was before (mpirun's fork, a shell), said apart.
// "1 process (rank 0) and 1 launcher recorded in 3 logs from 1 host; 1 log
// is an image of a process before it exec'ed".
std::string summarize(const fs::path& out) {
    Result<RunCensus> census = take_run_census(out.string());
    if (!census) return "nothing could be counted (" + census.error().message + ")";
    const RunCensus& c = *census;
    std::string s = plural(c.processes, "process", "processes");
    if (!c.ranks.empty()) {
        s += " (" + std::string(c.ranks.size() == 1 ? "rank " : "ranks ") + compact_ranks(c.ranks);
        if (c.ranks.size() < c.processes) s += ", " + std::to_string(c.processes - c.ranks.size()) + " without a rank";
        s += ")";
    }
    if (c.launchers > 0) s += " and " + plural(c.launchers, "launcher", "launchers");
    s += " recorded in " + plural(c.logs, "log", "logs") + " from " + plural(c.hosts, "host", "hosts");
    if (c.pre_exec_images > 0) {
        s += "; " + std::to_string(c.pre_exec_images) +
             (c.pre_exec_images == 1 ? " log is an image of a process before it exec'ed"
                                     : " logs are images of processes before they exec'ed");
        std::string names;
        for (const std::string& n : c.pre_exec_names) names += (names.empty() ? "" : ", ") + n;
        if (!names.empty()) s += " (" + names + ")";
    }
    if (c.unreadable > 0)
        s += "; " + std::to_string(c.unreadable) + (c.unreadable == 1 ? " log does" : " logs do") +
             " not start with a process_start event (`stacksage report` says why)";
    return s;
}

// The recorder's variables (docs/event-log.md) for the options: the preload
// first in LD_PRELOAD, what to leave out, sampling and live warnings.
void set_recorder_variables(const RunOptions& o, const std::string& preload_path, bool sampling) {
    prepend_preload(preload_path);
    if (o.no_topology) setenv("STACKSAGE_TOPOLOGY", "0", 1);
    if (o.no_model) setenv("STACKSAGE_MODEL", "0", 1);
    if (sampling) setenv("STACKSAGE_SAMPLE", o.sample.c_str(), 1);
    else unsetenv("STACKSAGE_SAMPLE");  // an outer setting must not switch it on behind --sample=off
    // Live warnings (preload/live_watcher.hpp): -q keeps their events and drops their lines.
    if (o.live == "off") setenv("STACKSAGE_LIVE", "off", 1);
    else if (o.quiet) setenv("STACKSAGE_LIVE", "quiet", 1);
    else if (o.live == "on") setenv("STACKSAGE_LIVE", "on", 1);
    if (o.live_hold > 0) setenv("STACKSAGE_LIVE_HOLD", fmt::format("{}", o.live_hold).c_str(), 1);
}

// The output directory, claimed by writing run.json there, and the launch
// planned for it. `claim` says how the last try went (Taken: another run
// holds it; Failed: error says why).
struct ClaimedDirectory {
    fs::path out;
    LaunchPlan plan;
    RunDirectoryClaim claim = RunDirectoryClaim::Failed;
    std::string error;
};

// Without -o, a default name that holds another run gets -2, -3, ...
// instead. Sets STACKSAGE_OUTPUT to the directory tried.
ClaimedDirectory claim_output_directory(const RunOptions& o, const LoadablePreload& loadable,
                                        const std::string& preload,
                                        const std::vector<UnrecordableProgram>& unrecordable) {
    const std::string job = job_id();
    const std::time_t started = std::time(nullptr);
    ClaimedDirectory c;
    for (int n = 1; n <= 10000; ++n) {
        c.out = fs::absolute(!o.output.empty() ? o.output : default_run_directory_name(job, started, n));
        setenv("STACKSAGE_OUTPUT", c.out.c_str(), 1);
        RecorderSetup recorder;
        recorder.variables = recorder_variables_from_environment(sanitizer_options_variable());
        recorder.preload_is_host_local = !loadable.alias_directory().empty();
        recorder.recorder_preload = with_sanitizer_runtime(loadable.path());
        recorder.output_directory = c.out.string();
        c.plan = plan_launch(o.command, recorder, [](const char* name) { return std::getenv(name); });
        c.claim = claim_run_directory(c.out, run_json_text(c.out, o, preload, c.plan, unrecordable), job,
                                      launcher_rank() >= 0, c.error);
        if (c.claim != RunDirectoryClaim::Taken || !o.output.empty()) break;
    }
    return c;
}

// stacksage's exit status for the command's wait status: its exit status,
// 126 when it could not be started, or its signal raised again.
int exit_status_of(int status, std::optional<LoadablePreload>& loadable) {
    if (status < 0) return 126;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    // Re-raising the signal ends stacksage without running destructors: the
    // private directory of links goes first.
    loadable.reset();
    if (WIFSIGNALED(status)) return end_by_signal(WTERMSIG(status), WCOREDUMP(status));
    return 126;
}

int run_command(const RunOptions& o) {
    // stacksage's own messages may all fail (stderr closed, full, a pipe with
    // no reader: SIGPIPE is ignored here, not in the command); the exit status
    // stays the command's.
    CommandOutput output("stacksage run");
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGPIPE, &ignore, &g_original_sigpipe);

    sampling::BackendSelection selection;
    char sample_error[256];
    if (!sampling::parse_backend_selection(o.sample.c_str(), selection, sample_error, sizeof sample_error)) {
        output.say(sample_error);
        return kExitUsage;
    }
    Result<std::string> preload = find_preload_library();
    fs::path out;
    bool traced = true;
    if (!preload) {
        output.say(preload.error().message + "\nstacksage run: running the command untraced.");
        traced = false;
    }
    // Lives until the command has ended: the path LD_PRELOAD names may be a
    // link in a private directory (an install path with a space or colon).
    std::optional<LoadablePreload> loadable;
    if (traced) {
        Result<LoadablePreload> made = LoadablePreload::for_library(*preload);
        if (made) {
            loadable.emplace(std::move(made).value());
        } else {
            output.say(made.error().message + "\nstacksage run: running the command untraced.");
            traced = false;
        }
    }
    std::vector<std::string> set_names = {"LD_PRELOAD",       "STACKSAGE_OUTPUT", "STACKSAGE_TOPOLOGY",
                                          "STACKSAGE_MODEL",  "STACKSAGE_SAMPLE", "STACKSAGE_LIVE",
                                          "STACKSAGE_LIVE_HOLD"};
    if (const char* variable = sanitizer_options_variable()) set_names.push_back(variable);
    const SavedEnvironment before(set_names);
    LaunchPlan plan;
    plan.command = o.command;
    // Said before the command starts, which still runs (untraced).
    std::vector<UnrecordableProgram> unrecordable;
    if (traced) {
        unrecordable = unrecordable_programs(o.command);
        for (const UnrecordableProgram& u : unrecordable) output.say("warning: " + u.message);
    }
    if (traced) {
        // The recorder's variables are set before the directory is claimed:
        // run.json records how the launcher carries them to other hosts.
        set_recorder_variables(o, loadable->path(), selection.enabled());
        ClaimedDirectory claimed = claim_output_directory(o, *loadable, *preload, unrecordable);
        out = claimed.out;
        plan = std::move(claimed.plan);
        if (claimed.claim == RunDirectoryClaim::Taken) {
            output.say(out.string() + " already holds a run (its run.json); choose another --output, or remove it. " +
                       "The command did not run.");
            return kExitUsage;
        }
        if (claimed.claim == RunDirectoryClaim::Failed) {
            output.say("cannot use " + out.string() + " as the output directory (" + claimed.error +
                       "); choose another with -o. Running the command untraced.");
            traced = false;
            before.restore();
            plan = LaunchPlan{};
            plan.command = o.command;
        }
    }
    if (traced) {
        for (const EnvironmentSetting& e : plan.environment) setenv(e.name.c_str(), e.value.c_str(), 1);
        // Said before the job starts: ranks that will be missing are not
        // discovered in the report afterwards. A rank's own `stacksage run`
        // keeps quiet (one per rank would repeat it).
        if (launcher_rank() < 0) {
            for (const std::string& w : plan.warnings) output.say("warning: " + w);
            if (!o.quiet)
                for (const std::string& n : plan.notes) output.say(n);
        }
        if (selection.enabled() && !o.quiet && launcher_rank() <= 0) explain_sampling_here(selection, output);
    }
    const int status = spawn_and_wait(plan.command, output);
    if (status >= 0 && WIFSIGNALED(status))
        output.say(fmt::format("{} was killed by signal {} ({})", o.command[0], WTERMSIG(status),
                               strsignal(WTERMSIG(status))));
    // Under a launcher every rank runs its own `stacksage run`: one summary is enough.
    if (traced && !o.quiet && launcher_rank() <= 0) {
        CommandOutput summary("stacksage");
        std::string why;
        for (const UnrecordableProgram& u : unrecordable) why += "; " + u.program + " ran untraced (" + u.reason + ")";
        summary.say(summarize(out) + why + "; in " + out.string());
    }
    return exit_status_of(status, loadable);
}

}  // namespace

CommandRunner add_run_command(CLI::App& app) {
    auto options = std::make_shared<RunOptions>();
    CLI::App* run = app.add_subcommand(
        "run", "Run a command with the recorder preloaded: stacksage run [options] -- COMMAND...");
    run->add_option("-o,--output", options->output,
                    "Directory for the recording, not holding another run (default: ./stacksage-<job id or timestamp>, "
                    "-2, -3, ... when taken)");
    run->add_flag("--no-topology", options->no_topology,
                  "Do not write the node's topology (OUT/<host>/topology.xml)");
    run->add_flag("--no-model", options->no_model,
                  "Do not write each process's model at exit (<log>.model.json)");
    run->add_flag("-q,--quiet", options->quiet,
                  "Do not print where the results are, nor what sampling and srun's --export will do, "
                  "nor live warnings (their events are still recorded)");
    run->add_option("--sample", options->sample,
                    "Memory and placement sampling: off (default), auto (every backend that works on each "
                    "node), or a list of pebs,ibs,pagefault,cpuclock,papi")
        ->default_str("off");
    run->add_option("--live", options->live,
                    "Warnings while the job runs: on (default: one line on stderr per node when over-subscription, "
                    "idle cores or CPU-quota throttling has held for --live-hold seconds) or off; "
                    "without it, as STACKSAGE_LIVE says")
        ->check(CLI::IsMember({"on", "off"}))
        ->default_str("on");
    run->add_option("--live-hold", options->live_hold,
                    "Seconds a condition must hold before its live warning (default: STACKSAGE_LIVE_HOLD, or 5)")
        ->check(CLI::Range(0.001, 86400.0))
        ->default_str("5");
    run->add_option("command", options->command, "The command to run, after --")->required();
    run->positionals_at_end();
    run->footer(
        "LAUNCHERS:\n"
        "  stacksage run -- mpirun --hostfile H -np 64 ./app records every rank on\n"
        "  every host: the launcher is made to carry LD_PRELOAD and STACKSAGE_* to its\n"
        "  ranks (Open MPI: OMPI_MCA_mca_base_env_list, or -x when the command uses\n"
        "  -x; MPICH and Intel MPI: -genv; Flux exports the environment, --env after\n"
        "  its own --env rules). DIR must be on a file system all hosts share.\n"
        "  Where the launcher cannot carry them (ssh, pdsh, an unknown MPI, env -i, a\n"
        "  recorder installed under a path with a space or colon), it says so before\n"
        "  the job starts; then run LAUNCHER ... stacksage run -o DIR -- ./app\n"
        "  (or srun stacksage run -- ./app). run.json records the launcher, its hosts\n"
        "  and -np (launch).\n"
        "  srun, salloc and sbatch get the recorder to every task: an --export (NONE,\n"
        "  NIL, a list; or SRUN_EXPORT_ENV, SLURM_EXPORT_ENV, SBATCH_EXPORT) that would\n"
        "  drop it is rewritten to carry LD_PRELOAD and STACKSAGE_* too, and said so first.");
    return [options] { return run_command(*options); };
}

}  // namespace stacksage::cli
