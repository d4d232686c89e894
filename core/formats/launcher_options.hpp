// The options of the launchers stacksage reads or rewrites: which take a
// value, so that a reader finds where the launcher's options end and the
// program's command begins. One table per launcher, shared by the analysis
// (analysis/launch_command.cpp reads a recorded command line) and
// `stacksage run` (cli/launcher_forwarding.cpp and cli/srun_forwarding.cpp
// rewrite the command to reach every rank). Options that take no value need
// no entry: an unknown option is read as a flag.
#pragma once

#include <string_view>

namespace stacksage::launcher_options {

// clang-format off: lists of words, filled as text

// Open MPI's mpirun, orterun, PRRTE's prterun: options that take one value
// as the next word ("-x NAME", "--map-by ppr:2:node").
inline constexpr std::string_view kOpenMpiWithValue[] = {
    "-np", "--np", "-n", "--n", "-c", "-N", "-H", "-host", "--host", "-hostfile", "--hostfile", "-machinefile",
    "--machinefile", "--default-hostfile", "-x", "-am", "--am", "--tune", "-map-by", "--map-by", "-bind-to",
    "--bind-to", "-rank-by", "--rank-by", "-npernode", "--npernode", "-npersocket", "--npersocket", "--ppr",
    "-prefix", "--prefix", "-wdir", "--wdir", "-wd", "--wd", "--path", "--preload-files", "--output",
    "--output-filename", "--timeout", "--app", "--cpu-set", "--cpu-list", "-rf", "--rankfile", "--stdin",
    "--launch-agent", "--personality", "--display", "--runtime-options", "-cpus-per-proc", "--cpus-per-proc",
    "-cpus-per-rank", "--cpus-per-rank", "--report-state-on-timeout", "--debugger", "--ompi-server",
    "--report-uri", "--tmpdir"};
// ... and two ("--mca NAME VALUE").
inline constexpr std::string_view kOpenMpiWithTwoValues[] = {"-mca", "--mca", "-gmca", "--gmca", "--prtemca",
                                                             "--pmixmca"};

// MPICH's Hydra mpiexec and Intel MPI's: options that take one value.
inline constexpr std::string_view kHydraWithValue[] = {
    "-n", "-np", "-f", "-hostfile", "-machinefile", "-hosts", "-host", "-ppn", "-perhost", "-genvlist",
    "-envlist", "-wdir", "-configfile", "-bootstrap", "-bootstrap-exec", "-launcher", "-launcher-exec", "-iface",
    "-bind-to", "-map-by", "-binding", "-rmk", "-demux", "-errfile-pattern", "-outfile-pattern",
    "-gpus-per-proc", "-genvexcl", "-envexcl", "-hosts-group", "-path", "-umask", "-tmpdir", "-hostos",
    "-localhost", "-branch-count"};
// ... and two ("-genv NAME VALUE").
inline constexpr std::string_view kHydraWithTwoValues[] = {"-genv", "-env"};

// clang-format on

// How an option takes its argument, as getopt_long sees it: a required
// argument may be the next word; an optional one only follows '='.
enum class Arg { None, Required, Optional };

struct LongOption {
    std::string_view name;  // without its "--"
    Arg arg;
};

// The options of Slurm 22.05's srun that take an argument
// (from their --help and man pages, hidden ones included): needed to find
// where the options end and the command begins (srun stops at the first
// word that is neither an option nor an option's argument). Options that
// take none need no entry: an unknown --word is read as a flag.
// clang-format off
inline constexpr LongOption kSrunLong[] = {
    {"accel-bind", Arg::Required}, {"account", Arg::Required}, {"acctg-freq", Arg::Required},
    {"bb", Arg::Required}, {"bbf", Arg::Required}, {"bcast", Arg::Optional}, {"bcast-exclude", Arg::Required},
    {"begin", Arg::Required}, {"chdir", Arg::Required}, {"cluster-constraint", Arg::Required},
    {"clusters", Arg::Required}, {"comment", Arg::Required}, {"compress", Arg::Optional},
    {"constraint", Arg::Required}, {"container", Arg::Required}, {"core-spec", Arg::Required},
    {"cores-per-socket", Arg::Required}, {"cpu-bind", Arg::Required}, {"cpu-freq", Arg::Required},
    {"cpus-per-gpu", Arg::Required}, {"cpus-per-task", Arg::Required}, {"deadline", Arg::Required},
    {"debugger-test", Arg::None}, {"delay-boot", Arg::Required}, {"dependency", Arg::Required},
    {"distribution", Arg::Required}, {"epilog", Arg::Required}, {"error", Arg::Required},
    {"exclude", Arg::Required}, {"exclusive", Arg::Optional}, {"export", Arg::Required},
    {"extra-node-info", Arg::Required}, {"get-user-env", Arg::Optional}, {"gid", Arg::Required},
    {"gpu-bind", Arg::Required}, {"gpu-freq", Arg::Required}, {"gpus", Arg::Required},
    {"gpus-per-node", Arg::Required}, {"gpus-per-socket", Arg::Required}, {"gpus-per-task", Arg::Required},
    {"gres", Arg::Required}, {"gres-flags", Arg::Required}, {"het-group", Arg::Required},
    {"hint", Arg::Required}, {"immediate", Arg::Optional}, {"input", Arg::Required},
    {"jobid", Arg::Required}, {"job-name", Arg::Required}, {"kill-on-bad-exit", Arg::Optional},
    {"licenses", Arg::Required}, {"mail-type", Arg::Required}, {"mail-user", Arg::Required},
    {"mcs-label", Arg::Required}, {"mem", Arg::Required}, {"mem-bind", Arg::Required},
    {"mem-per-cpu", Arg::Required}, {"mem-per-gpu", Arg::Required}, {"mincpus", Arg::Required},
    {"mpi", Arg::Required}, {"network", Arg::Required}, {"nice", Arg::Optional},
    {"nodefile", Arg::Required}, {"nodelist", Arg::Required}, {"nodes", Arg::Required},
    {"ntasks", Arg::Required}, {"ntasks-per-core", Arg::Required}, {"ntasks-per-gpu", Arg::Required},
    {"ntasks-per-node", Arg::Required}, {"ntasks-per-socket", Arg::Required}, {"output", Arg::Required},
    {"partition", Arg::Required}, {"power", Arg::Required}, {"prefer", Arg::Required},
    {"priority", Arg::Required}, {"profile", Arg::Required}, {"prolog", Arg::Required},
    {"propagate", Arg::Optional}, {"qos", Arg::Required}, {"relative", Arg::Required},
    {"reservation", Arg::Required}, {"resv-ports", Arg::Optional}, {"send-libs", Arg::Optional},
    {"signal", Arg::Required}, {"slurmd-debug", Arg::Required}, {"sockets-per-node", Arg::Required},
    {"switches", Arg::Required}, {"task-epilog", Arg::Required}, {"task-prolog", Arg::Required},
    {"thread-spec", Arg::Required}, {"threads", Arg::Required}, {"threads-per-core", Arg::Required},
    {"time", Arg::Required}, {"time-min", Arg::Required}, {"tmp", Arg::Required},
    {"tres-per-task", Arg::Required}, {"uid", Arg::Required}, {"wait", Arg::Required},
    {"wckey", Arg::Required}, {"x11", Arg::Optional},
};
// clang-format on
inline constexpr std::string_view kSrunShortRequired = "AbBcCdDeGiJLmMnNopqrStTwWx";
inline constexpr std::string_view kSrunShortOptional = "IK";

// How srun takes the argument of "--name" (given without its "--").
constexpr Arg srun_long_arg(std::string_view name) {
    for (const LongOption& o : kSrunLong)
        if (o.name == name) return o.arg;
    return Arg::None;
}

// How srun takes the argument of "-c" (given as 'c').
constexpr Arg srun_short_arg(char letter) {
    if (kSrunShortRequired.find(letter) != std::string_view::npos) return Arg::Required;
    if (kSrunShortOptional.find(letter) != std::string_view::npos) return Arg::Optional;
    return Arg::None;
}

}  // namespace stacksage::launcher_options
