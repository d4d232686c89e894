#include "cli/launcher_forwarding.hpp"

#include "cli/batch_allocation.hpp"
#include "cli/srun_forwarding.hpp"
#include "core/formats/launcher_options.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <optional>
#include <string_view>

extern char** environ;

namespace stacksage::cli {

namespace {

namespace fs = std::filesystem;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

std::string base_name(const std::string& path) { return fs::path(path).filename().string(); }

// ---- options of a command line --------------------------------------------

// The options of one program that take a value as the next argument; any
// other argument starting with '-' is taken for a flag. "--name=value" and
// "-nVALUE" carry their value within.
struct OptionSyntax {
    std::set<std::string_view> with_value;
    std::set<std::string_view> with_two_values;  // Hydra's -genv NAME VALUE, Open MPI's --mca NAME VALUE
    std::size_t operands_before_command = 0;     // timeout's DURATION, taskset's mask
};

// Where the options of the program at `first` end: the index of its
// command (the first argument that is neither an option nor an option's
// value), or command.size().
std::size_t end_of_options(const std::vector<std::string>& command, std::size_t first, const OptionSyntax& syntax) {
    std::size_t i = first;
    while (i < command.size()) {
        const std::string& a = command[i];
        if (a == "--") return i + 1;
        if (a.size() < 2 || a[0] != '-') break;
        const std::string name = a.substr(0, a.find('='));
        if (syntax.with_two_values.count(name) && name == a) i += 3;
        else if (syntax.with_value.count(name) && name == a) i += 2;
        else ++i;
    }
    return std::min(i + syntax.operands_before_command, command.size());
}

// Each value of option `names` (as "-n 4", "--np=4" or "-n4" for one-letter
// options) before `end`.
std::vector<std::string> option_values(const std::vector<std::string>& command, std::size_t first, std::size_t end,
                                       std::initializer_list<std::string_view> names) {
    std::vector<std::string> values;
    for (std::size_t i = first; i < end; ++i) {
        const std::string& a = command[i];
        for (std::string_view n : names) {
            if (a == n && i + 1 < end) values.push_back(command[i + 1]);
            else if (starts_with(a, n) && a.size() > n.size() && a[n.size()] == '=')
                values.push_back(a.substr(n.size() + 1));
            else if (n.size() == 2 && starts_with(a, n) && a.size() > 2 && n[1] != '-' &&
                     std::isdigit(static_cast<unsigned char>(a[2])))
                values.push_back(a.substr(2));  // "-n4"
        }
    }
    return values;
}

bool has_option(const std::vector<std::string>& command, std::size_t first, std::size_t end,
                std::initializer_list<std::string_view> names) {
    for (std::size_t i = first; i < end; ++i)
        for (std::string_view n : names)
            if (command[i] == n ||
                (starts_with(command[i], n) && command[i].size() > n.size() && command[i][n.size()] == '='))
                return true;
    return false;
}

long whole_number(const std::string& s) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s.c_str(), &end, 10);
    return (errno == 0 && end != s.c_str() && *end == '\0' && v >= 0) ? v : -1;
}

// ---- wrappers in front of the launcher -------------------------------------

struct Wrapper {
    std::string_view name;
    OptionSyntax syntax;
};

const std::vector<Wrapper>& wrappers() {
    static const std::vector<Wrapper> table = {
        {"env", {{"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}, {}, 0}},
        {"time", {{"-f", "--format", "-o", "--output"}, {}, 0}},
        {"nice", {{"-n", "--adjustment"}, {}, 0}},
        {"nohup", {{}, {}, 0}},
        {"timeout", {{"-s", "--signal", "-k", "--kill-after"}, {}, 1}},
        {"stdbuf", {{"-i", "-o", "-e", "--input", "--output", "--error"}, {}, 0}},
        {"taskset", {{}, {}, 1}},  // taskset [-c] MASK|LIST COMMAND
        {"numactl",
         {{"-C", "--physcpubind", "-N", "--cpunodebind", "-m", "--membind", "-i", "--interleave", "-p", "--preferred",
           "-P", "--preferred-many", "-w", "--weighted-interleave"},
          {},
          0}},
    };
    return table;
}

const Wrapper* wrapper_named(const std::string& program) {
    const std::string name = base_name(program);
    for (const Wrapper& w : wrappers())
        if (w.name == name) return &w;
    return nullptr;
}

// env's NAME=VALUE operands come before its command.
std::size_t skip_assignments(const std::vector<std::string>& command, std::size_t i) {
    auto is_assignment = [](const std::string& a) {
        const auto eq = a.find('=');
        return eq != std::string::npos && eq > 0 && a[0] != '-' && a.substr(0, eq).find('/') == std::string::npos;
    };
    while (i < command.size() && is_assignment(command[i])) ++i;
    return i;
}

// ---- which launcher ---------------------------------------------------------

// The program's file, links followed; `program` itself when it is not found.
std::string resolve_program(const std::string& program, const EnvironmentReader& getenv) {
    std::error_code ec;
    if (program.find('/') != std::string::npos) {
        fs::path p = fs::weakly_canonical(program, ec);
        return ec ? program : p.string();
    }
    const char* path = getenv("PATH");
    std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
    std::string dir;
    while (std::getline(dirs, dir, ':')) {
        if (dir.empty()) dir = ".";
        fs::path candidate = fs::path(dir) / program;
        if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate, ec)) {
            fs::path real = fs::canonical(candidate, ec);
            return ec ? candidate.string() : real.string();
        }
    }
    return program;
}

bool sibling_exists(const std::string& resolved, std::initializer_list<const char*> names) {
    std::error_code ec;
    const fs::path dir = fs::path(resolved).parent_path();
    if (dir.empty()) return false;
    for (const char* n : names)
        if (fs::exists(dir / n, ec)) return true;
    return false;
}

bool looks_like_intel_mpi(const std::string& resolved) {
    return sibling_exists(resolved, {"impi_info", "IMB-MPI1"}) || contains(resolved, "/intel") ||
           contains(resolved, "/impi") || contains(resolved, "/oneapi");
}

// Flux's subcommands that start a job's tasks.
bool is_flux_launch(const std::string& sub) {
    return sub == "run" || sub == "submit" || sub == "bulksubmit" || sub == "batch" || sub == "alloc";
}

LauncherKind kind_of(const std::vector<std::string>& command, std::size_t index, const std::string& resolved) {
    const std::string given = base_name(command[index]);
    const std::string real = base_name(resolved);
    auto named = [&](std::initializer_list<std::string_view> names) {
        for (std::string_view n : names)
            if (given == n || real == n) return true;
        return false;
    };
    // Slurm's srun, salloc and sbatch: cli/srun_forwarding.hpp.
    if (named({"srun", "salloc", "sbatch"})) return LauncherKind::Srun;
    if (named({"orterun", "mpirun.openmpi", "mpiexec.openmpi", "prterun", "prun"})) return LauncherKind::OpenMpi;
    if (named({"mpiexec.hydra", "mpiexec.mpich", "mpirun.mpich"}))
        return looks_like_intel_mpi(resolved) ? LauncherKind::IntelMpi : LauncherKind::MpichHydra;
    if (named({"mpirun", "mpiexec"})) {
        if (sibling_exists(resolved, {"ompi_info", "orterun", "orted", "prterun"})) return LauncherKind::OpenMpi;
        if (looks_like_intel_mpi(resolved)) return LauncherKind::IntelMpi;
        if (sibling_exists(resolved, {"mpiexec.hydra", "hydra_pmi_proxy", "mpichversion"}))
            return LauncherKind::MpichHydra;
        return LauncherKind::UnknownRemote;  // an MPI this version does not know
    }
    if (named({"flux"})) {
        for (std::size_t i = index + 1; i < command.size(); ++i) {
            if (starts_with(command[i], "-")) continue;
            if (command[i] == "mini" && i + 1 < command.size())
                return is_flux_launch(command[i + 1]) ? LauncherKind::Flux : LauncherKind::None;
            return is_flux_launch(command[i]) ? LauncherKind::Flux : LauncherKind::None;
        }
        return LauncherKind::None;
    }
    if (named({"ssh", "rsh", "pdsh", "clush", "pbsdsh", "pssh", "parallel-ssh", "dsh", "aprun", "jsrun", "lrun",
               "ibrun", "charmrun", "mpiexec.mpd", "poe"}))
        return LauncherKind::UnknownRemote;
    return LauncherKind::None;
}

// ---- host files ---------------------------------------------------------------

void add_host(std::vector<std::string>& hosts, std::string name) {
    // "n01:4" (Hydra, Open MPI's -H) and "n01 slots=4" (Open MPI) name n01.
    if (auto colon = name.find(':'); colon != std::string::npos) name.resize(colon);
    if (!name.empty() && std::find(hosts.begin(), hosts.end(), name) == hosts.end()) hosts.push_back(name);
}

void add_host_list(std::vector<std::string>& hosts, const std::string& list) {
    std::stringstream s(list);
    std::string name;
    while (std::getline(s, name, ',')) add_host(hosts, name);
}

// Open MPI ("n01 slots=4 max_slots=8", "# comment") and Hydra ("n01:4") host files.
bool read_hostfile(const std::string& file, std::vector<std::string>& hosts) {
    std::ifstream in(file);
    if (!in) return false;
    std::string line;
    while (std::getline(in, line)) {
        line = line.substr(0, line.find('#'));
        std::stringstream words(line);
        std::string first;
        if (words >> first) add_host(hosts, first);
    }
    return true;
}

void record_hosts(LaunchPlan& plan, const std::vector<std::string>& command, std::size_t first, std::size_t end,
                  std::initializer_list<std::string_view> host_options,
                  std::initializer_list<std::string_view> file_options,
                  std::initializer_list<std::string_view> count_options) {
    for (const std::string& list : option_values(command, first, end, host_options)) add_host_list(plan.hosts, list);
    for (const std::string& file : option_values(command, first, end, file_options)) {
        plan.hostfile = file;
        if (!read_hostfile(file, plan.hosts))
            plan.notes.push_back("cannot read the host file " + file + " to record which hosts the job uses");
    }
    for (const std::string& n : option_values(command, first, end, count_options)) plan.processes = whole_number(n);
}

// ---- the launchers --------------------------------------------------------------

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (const auto& i : items) out += (out.empty() ? "" : std::string(separator)) + i;
    return out;
}

// Appends the names not already in `list` (split on `delimiter`) to it.
std::string with_names(std::string list, const std::vector<std::string>& names, const std::string& delimiter) {
    std::vector<std::string> present;
    for (std::size_t at = 0; at <= list.size();) {
        std::size_t next = list.find(delimiter, at);
        if (next == std::string::npos) next = list.size();
        std::string item = list.substr(at, next - at);
        present.push_back(item.substr(0, item.find('=')));
        at = next + delimiter.size();
    }
    for (const auto& n : names)
        if (std::find(present.begin(), present.end(), n) == present.end()) list += (list.empty() ? "" : delimiter) + n;
    return list;
}

// mca_base_env_list as set in Open MPI's parameter files, which the
// environment variable would override: kept in what is set.
std::string env_list_from_parameter_files(const EnvironmentReader& getenv) {
    std::vector<std::string> files;
    if (const char* home = getenv("HOME")) files.push_back(std::string(home) + "/.openmpi/mca-params.conf");
    files.push_back("/etc/openmpi/openmpi-mca-params.conf");
    std::string value;
    for (const auto& f : files) {  // the user's file wins over the system's
        std::ifstream in(f);
        std::string line;
        while (std::getline(in, line)) {
            line = line.substr(0, line.find('#'));
            const auto eq = line.find('=');
            if (eq == std::string::npos) continue;
            auto trim = [](std::string s) {
                s.erase(0, s.find_first_not_of(" \t"));
                s.erase(s.find_last_not_of(" \t\r") + 1);
                return s;
            };
            if (trim(line.substr(0, eq)) == "mca_base_env_list") return trim(line.substr(eq + 1));
        }
    }
    return value;
}

const OptionSyntax& open_mpi_syntax() {
    static const OptionSyntax s = {{std::begin(launcher_options::kOpenMpiWithValue),
                                    std::end(launcher_options::kOpenMpiWithValue)},
                                   {std::begin(launcher_options::kOpenMpiWithTwoValues),
                                    std::end(launcher_options::kOpenMpiWithTwoValues)},
                                   0};
    return s;
}

void plan_open_mpi(LaunchPlan& plan, const EnvironmentReader& getenv) {
    const auto& c = plan.command;
    const std::size_t first = plan.program_index + 1;
    const std::size_t end = end_of_options(c, first, open_mpi_syntax());
    record_hosts(plan, c, first, end, {"-H", "-host", "--host"},
                 {"-hostfile", "--hostfile", "-machinefile", "--machinefile", "--default-hostfile"},
                 {"-np", "--np", "-n", "--n", "-c"});
    const std::vector<std::string> names = plan.forwarded_variables;
    // Open MPI refuses -x mixed with mca_base_env_list: use the form the
    // command already uses.
    if (has_option(c, first, end, {"-x", "--x"})) {
        std::vector<std::string> inserted;
        for (const auto& n : names) inserted.insert(inserted.end(), {"-x", n});
        plan.command.insert(plan.command.begin() + static_cast<long>(first), inserted.begin(), inserted.end());
        plan.how = "-x";
        return;
    }
    const char* delimiter_env = getenv("OMPI_MCA_mca_base_env_list_delimiter");
    const std::string delimiter = delimiter_env && *delimiter_env ? delimiter_env : ";";
    for (std::size_t i = first; i + 2 < end; ++i) {
        if ((c[i] == "-mca" || c[i] == "--mca" || c[i] == "-gmca" || c[i] == "--gmca") &&
            c[i + 1] == "mca_base_env_list") {
            plan.command[i + 2] = with_names(c[i + 2], names, delimiter);
            plan.how = c[i] + " mca_base_env_list";
            return;
        }
    }
    const char* existing = getenv("OMPI_MCA_mca_base_env_list");
    const std::string list = existing ? existing : env_list_from_parameter_files(getenv);
    plan.environment.push_back({"OMPI_MCA_mca_base_env_list", with_names(list, names, delimiter)});
    plan.how = "OMPI_MCA_mca_base_env_list";
}

const OptionSyntax& hydra_syntax() {
    static const OptionSyntax s = {{std::begin(launcher_options::kHydraWithValue),
                                    std::end(launcher_options::kHydraWithValue)},
                                   {std::begin(launcher_options::kHydraWithTwoValues),
                                    std::end(launcher_options::kHydraWithTwoValues)},
                                   0};
    return s;
}

// MPICH's Hydra and Intel MPI: `-genv NAME VALUE` reaches every process
// whatever -genvnone, -genvlist or -envnone say (they choose which of the
// launcher's own environment is passed; -genv's are always added).
void plan_hydra(LaunchPlan& plan, const RecorderSetup& recorder, const EnvironmentReader& getenv) {
    const auto& c = plan.command;
    const std::size_t first = plan.program_index + 1;
    const std::size_t end = end_of_options(c, first, hydra_syntax());
    record_hosts(plan, c, first, end, {"-hosts", "-host"}, {"-f", "-hostfile", "-machinefile"}, {"-n", "-np"});
    // Intel MPI's node ranges ("n[01-04]") and host file from its environment.
    for (const std::string& group : option_values(c, first, end, {"-hosts-group"}))
        for (std::string& h : expand_slurm_host_list(group)) add_host(plan.hosts, std::move(h));
    if (plan.kind == LauncherKind::IntelMpi && plan.hostfile.empty())
        if (const char* file = getenv("I_MPI_HYDRA_HOST_FILE"); file && *file) {
            plan.hostfile = file;
            read_hostfile(file, plan.hosts);
        }
    // An exclusion list naming the recorder's variables keeps them from the
    // ranks whatever -genv says, as far as the launcher's documentation tells.
    for (const std::string& excluded : option_values(c, first, end, {"-genvexcl", "-envexcl"}))
        for (const auto& name : plan.forwarded_variables)
            if (("," + excluded + ",").find("," + name + ",") != std::string::npos)
                plan.warnings.push_back("the command excludes " + name + " from its ranks (" + excluded +
                                        "): they may run untraced. To record them, remove it from the list or run `" +
                                        base_name(plan.program) + " ... stacksage run -o " + recorder.output_directory +
                                        " -- APP ...`");
    if (has_option(c, first, end, {"-configfile"}))
        plan.notes.push_back(
            "the options in the -configfile file are the launcher's; `-genv` given on the command "
            "line still reaches every process");
    std::vector<std::string> inserted;
    for (const auto& v : recorder.variables)
        if (std::find(plan.forwarded_variables.begin(), plan.forwarded_variables.end(), v.name) !=
            plan.forwarded_variables.end())
            inserted.insert(inserted.end(), {"-genv", v.name, v.value});
    plan.command.insert(plan.command.begin() + static_cast<long>(first), inserted.begin(), inserted.end());
    plan.how = "-genv";
}

const OptionSyntax& flux_run_syntax() {
    static const OptionSyntax s = {{"-n",
                                    "--ntasks",
                                    "-N",
                                    "--nodes",
                                    "-c",
                                    "--cores-per-task",
                                    "-g",
                                    "--gpus-per-task",
                                    "--tasks-per-node",
                                    "--tasks-per-core",
                                    "--gpus-per-node",
                                    "-t",
                                    "--time-limit",
                                    "--job-name",
                                    "-o",
                                    "--setopt",
                                    "-S",
                                    "--setattr",
                                    "--env",
                                    "--env-remove",
                                    "--env-file",
                                    "--input",
                                    "--output",
                                    "--error",
                                    "--cwd",
                                    "--urgency",
                                    "--dependency",
                                    "--requires",
                                    "-q",
                                    "--queue",
                                    "-B",
                                    "--bank",
                                    "--begin-time",
                                    "--taskmap",
                                    "--cc",
                                    "--bcc",
                                    "--flags",
                                    "--add-file",
                                    "--conf",
                                    "--signal",
                                    "--log",
                                    "--log-stderr",
                                    "-u"},
                                   {},
                                   0};
    return s;
}

// Flux exports the whole environment unless --env/--env-remove rules
// remove some; rules apply in order, so ours go after the user's last one.
void plan_flux(LaunchPlan& plan) {
    auto& c = plan.command;
    std::size_t sub = plan.program_index + 1;
    while (sub < c.size() && (starts_with(c[sub], "-") || c[sub] == "mini")) ++sub;
    const std::size_t first = sub + 1;
    const std::size_t end = end_of_options(c, first, flux_run_syntax());
    for (const std::string& n : option_values(c, first, end, {"-n", "--ntasks"})) plan.processes = whole_number(n);
    for (const std::string& n : option_values(c, first, end, {"-N", "--nodes"})) plan.nodes = whole_number(n);
    if (c[sub] == "submit" || c[sub] == "bulksubmit" || c[sub] == "batch")
        plan.notes.push_back("`flux " + c[sub] + "` returns before the job runs: run `stacksage report` on the " +
                             "output directory once the job has finished");
    std::size_t after_rules = 0;
    for (std::size_t i = first; i < end; ++i) {
        const std::string& a = c[i];
        if (a == "--env" || a == "--env-remove" || a == "--env-file") after_rules = i + 2;
        else if (starts_with(a, "--env=") || starts_with(a, "--env-remove=") || starts_with(a, "--env-file="))
            after_rules = i + 1;
    }
    if (after_rules == 0) {
        plan.remote = RemoteRecording::Inherited;
        plan.how = "flux exports the whole environment";
        return;
    }
    std::vector<std::string> inserted;
    for (const auto& n : plan.forwarded_variables) inserted.push_back("--env=" + n);
    c.insert(c.begin() + static_cast<long>(std::min(after_rules, c.size())), inserted.begin(), inserted.end());
    plan.how = "--env";
}

// An MPI launcher that names no host runs on the batch allocation's hosts
// (srun on its allocation too); Flux has its own instance's.
void record_allocation_hosts(LaunchPlan& plan, const EnvironmentReader& getenv) {
    if (!plan.hosts.empty()) {
        plan.hosts_from = "command";
        return;
    }
    if (plan.kind == LauncherKind::Flux || !plan.hostfile.empty()) return;
    BatchAllocation allocation = batch_allocation(getenv);
    if (allocation.hosts.empty()) return;
    plan.hosts = std::move(allocation.hosts);
    plan.hosts_from = allocation.source;
}

std::string quoted_command(const std::vector<std::string>& command, std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to && i < command.size(); ++i) out += (out.empty() ? "" : " ") + command[i];
    return out;
}

}  // namespace

const char* launcher_kind_word(LauncherKind kind) {
    switch (kind) {
        case LauncherKind::None: return "none";
        case LauncherKind::OpenMpi: return "openmpi";
        case LauncherKind::MpichHydra: return "mpich-hydra";
        case LauncherKind::IntelMpi: return "intel-mpi";
        case LauncherKind::Flux: return "flux";
        case LauncherKind::Srun: return "srun";
        case LauncherKind::UnknownRemote: return "unknown-remote";
    }
    return "none";
}

const char* remote_recording_word(RemoteRecording how) {
    switch (how) {
        case RemoteRecording::NotApplicable: return "not-applicable";
        case RemoteRecording::Inherited: return "inherited";
        case RemoteRecording::Forwarded: return "forwarded";
        case RemoteRecording::NotForwarded: return "not-forwarded";
    }
    return "not-applicable";
}

// srun, salloc and sbatch export the whole environment unless an --export
// (or SRUN_EXPORT_ENV, SLURM_EXPORT_ENV, SBATCH_EXPORT) says otherwise;
// cli/srun_forwarding rewrites what would drop the recorder's variables.
void plan_slurm(LaunchPlan& plan, const std::vector<std::string>& command, const RecorderSetup& recorder,
                const EnvironmentReader& getenv) {
    RecorderVariables variables;
    variables.preload = recorder.recorder_preload;
    for (const EnvironmentSetting& v : recorder.variables)
        if (v.name != "LD_PRELOAD") variables.names.push_back(v.name);
    const std::vector<std::string> launched(command.begin() + static_cast<std::ptrdiff_t>(plan.program_index),
                                            command.end());
    auto lookup = [&getenv](std::string_view name) -> std::optional<std::string> {
        const char* v = getenv(std::string(name).c_str());
        return v ? std::optional<std::string>(v) : std::nullopt;
    };
    std::optional<SlurmForwarding> forwarding =
        recorder.recorder_preload.empty() ? std::nullopt : forward_through_slurm(launched, lookup, variables);
    plan.remote = RemoteRecording::Inherited;
    plan.how = "Slurm exports the environment";
    if (!forwarding) return;
    plan.command.assign(command.begin(), command.begin() + static_cast<std::ptrdiff_t>(plan.program_index));
    plan.command.insert(plan.command.end(), forwarding->command.begin(), forwarding->command.end());
    for (const EnvironmentChange& change : forwarding->environment)
        plan.environment.push_back({change.name, change.value});
    plan.notes.insert(plan.notes.end(), forwarding->notes.begin(), forwarding->notes.end());
    if (plan.command != command || !forwarding->environment.empty()) {
        plan.remote = RemoteRecording::Forwarded;
        plan.how = "--export";
        plan.forwarded_variables.push_back("LD_PRELOAD");
        plan.forwarded_variables.insert(plan.forwarded_variables.end(), variables.names.begin(),
                                        variables.names.end());
    }
}

LaunchPlan plan_launch(const std::vector<std::string>& command, const RecorderSetup& recorder,
                       const EnvironmentReader& getenv) {
    LaunchPlan plan;
    plan.command = command;
    // Past the wrappers: env, time, nice, ... (each may wrap the next).
    std::size_t i = 0;
    bool environment_cleared = false;
    while (i < command.size()) {
        const Wrapper* w = wrapper_named(command[i]);
        if (!w) break;
        if (w->name == "env")
            environment_cleared |=
                has_option(command, i + 1, end_of_options(command, i + 1, w->syntax), {"-i", "--ignore-environment"});
        i = end_of_options(command, i + 1, w->syntax);
        if (w->name == "env") i = skip_assignments(command, i);
    }
    if (i >= command.size()) return plan;
    const std::string resolved = resolve_program(command[i], getenv);
    plan.kind = kind_of(command, i, resolved);
    if (plan.kind == LauncherKind::None) return plan;
    plan.program = command[i];
    plan.program_index = i;
    const std::string launcher = base_name(plan.program);
    const std::string form = "`" + quoted_command(command, i, command.size()) + "` as `" + launcher +
                             " ... stacksage run -o " + recorder.output_directory + " -- APP ...`";

    if (environment_cleared) {
        plan.remote = RemoteRecording::NotForwarded;
        plan.warnings.push_back("`env -i` clears the recorder's variables before " + launcher +
                                " starts: nothing it runs will be recorded; run " + form);
        return plan;
    }
    if (plan.kind == LauncherKind::Srun) {
        record_allocation_hosts(plan, getenv);
        plan_slurm(plan, command, recorder, getenv);
        return plan;
    }
    if (plan.kind == LauncherKind::UnknownRemote) {
        plan.remote = RemoteRecording::NotForwarded;
        // An MPI this version does not know: its ranks and hosts, read as
        // Open MPI and Hydra spell them, still tell the report what is missing.
        if (launcher == "mpirun" || launcher == "mpiexec") {
            const std::size_t first = i + 1;
            record_hosts(plan, command, first, end_of_options(command, first, open_mpi_syntax()),
                         {"-H", "-host", "--host", "-hosts"},
                         {"-hostfile", "--hostfile", "-machinefile", "--machinefile", "-f"}, {"-np", "--np", "-n"});
            record_allocation_hosts(plan, getenv);
        }
        plan.warnings.push_back(launcher + " may start processes on other hosts, which do not inherit the recorder (" +
                                "LD_PRELOAD, STACKSAGE_OUTPUT): they will not be recorded. To record them, run " +
                                form);
        return plan;
    }
    for (const auto& v : recorder.variables)
        if (!(recorder.preload_is_host_local && v.name == "LD_PRELOAD")) plan.forwarded_variables.push_back(v.name);
    plan.remote = RemoteRecording::Forwarded;
    switch (plan.kind) {
        case LauncherKind::OpenMpi: plan_open_mpi(plan, getenv); break;
        case LauncherKind::MpichHydra:
        case LauncherKind::IntelMpi: plan_hydra(plan, recorder, getenv); break;
        case LauncherKind::Flux: plan_flux(plan); break;
        default: break;
    }
    record_allocation_hosts(plan, getenv);
    if (!plan.warnings.empty()) {  // the command itself keeps a variable from the ranks
        plan.remote = RemoteRecording::NotForwarded;
        return plan;
    }
    if (recorder.preload_is_host_local) {
        // The link directory exists on this host only: a forwarded LD_PRELOAD
        // would make ld.so complain in every remote rank and record nothing.
        plan.remote = RemoteRecording::NotForwarded;
        plan.warnings.push_back(
            "the recorder's installed path holds a space or colon, so LD_PRELOAD names a link in a "
            "private directory of this host: ranks " +
            launcher +
            " starts on other hosts cannot "
            "load it and will not be recorded. To record them, run " +
            form);
        return plan;
    }
    plan.notes.push_back(launcher + " (" + launcher_kind_word(plan.kind) + ") carries " +
                         joined(plan.forwarded_variables, ", ") + " to its ranks on every host (" + plan.how + "); " +
                         "ranks on other hosts write into " + recorder.output_directory +
                         ": it must be on a file system they share");
    return plan;
}

std::vector<EnvironmentSetting> recorder_variables_from_environment(const char* sanitizer_options_variable) {
    std::vector<EnvironmentSetting> out;
    if (const char* p = std::getenv("LD_PRELOAD")) out.push_back({"LD_PRELOAD", p});
    for (char** e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos || !starts_with(entry, "STACKSAGE_")) continue;
        out.push_back({std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1))});
    }
    std::sort(out.begin() + (out.empty() || out[0].name != "LD_PRELOAD" ? 0 : 1), out.end(),
              [](const auto& a, const auto& b) { return a.name < b.name; });
    if (sanitizer_options_variable)
        if (const char* v = std::getenv(sanitizer_options_variable)) out.push_back({sanitizer_options_variable, v});
    return out;
}

}  // namespace stacksage::cli
