// How `stacksage run -- LAUNCHER ...` makes the recorder reach the ranks a
// parallel launcher starts on other hosts.
//
// A rank started on this host inherits LD_PRELOAD and STACKSAGE_OUTPUT from
// the launcher. One started on another host does not: an ssh login, a
// PBS/TM spawn or a daemon of the launcher has an environment of its own,
// and the ranks there ran untraced while the report looked clean. Each
// launcher has its own way to carry variables to its ranks; this module
// knows them:
//
//   Open MPI (mpirun, mpiexec, orterun)  OMPI_MCA_mca_base_env_list, or `-x`
//                                        when the command already uses -x
//                                        (Open MPI refuses the two mixed)
//   MPICH Hydra (mpiexec.hydra, mpiexec) `-genv NAME VALUE`
//   Intel MPI (mpirun, mpiexec.hydra)    `-genv NAME VALUE`
//   Flux (flux run/submit/...)           the whole environment by default;
//                                        `--env=NAME` after the user's own
//                                        --env/--env-remove rules
//   srun, salloc, sbatch                 the whole environment unless an
//                                        --export drops it: cli/srun_forwarding
//
// Programs that may start processes on other hosts without carrying the
// environment (ssh, pdsh, an mpiexec of an unknown MPI, ...) get a warning
// with the form that works: `LAUNCHER ... stacksage run -- APP`.
//
// The launcher is found through wrappers (`env`, `time`, `nice`, `timeout`,
// ...) and by its real file (symbolic links followed: Debian's mpirun is
// /etc/alternatives/mpirun -> /usr/bin/mpirun.openmpi); a plain `mpirun` or
// `mpiexec` is told apart by the programs installed next to it.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace stacksage::cli {

enum class LauncherKind {
    None,  // no launcher: the command's processes inherit the environment
    OpenMpi,
    MpichHydra,
    IntelMpi,
    Flux,
    Srun,           // srun, salloc, sbatch: cli/srun_forwarding.hpp
    UnknownRemote,  // may start processes on other hosts; cannot carry the recorder there
};

// "openmpi", "mpich-hydra", "intel-mpi", "flux", "srun", "unknown-remote", "none": run.json's words.
const char* launcher_kind_word(LauncherKind kind);

// Whether the ranks on other hosts get the recorder.
enum class RemoteRecording {
    NotApplicable,  // no launcher
    Inherited,      // the launcher passes the whole environment (Flux, Hydra by default, srun by default)
    Forwarded,      // the command or its environment was changed to carry the variables
    NotForwarded,   // they will run untraced (said before the job starts)
};

// "inherited", "forwarded", "not-forwarded", "not-applicable": run.json's words.
const char* remote_recording_word(RemoteRecording how);

// The environment the plan reads (PATH, OMPI_MCA_*, HOME, ...); std::getenv
// in `stacksage run`, a map in the tests.
using EnvironmentReader = std::function<const char*(const char*)>;

struct EnvironmentSetting {
    std::string name;
    std::string value;
};

// What `stacksage run` knows about the recorder when it plans the launch.
struct RecorderSetup {
    // The variables the ranks need, with their values as set for the
    // command: LD_PRELOAD, STACKSAGE_OUTPUT and every other STACKSAGE_*.
    std::vector<EnvironmentSetting> variables;
    // LD_PRELOAD names a link in a private directory of this host (the
    // installed path holds a space or colon): no other host has it.
    bool preload_is_host_local = false;
    // The recorder's own LD_PRELOAD entries, without the user's preloads
    // (what srun --export=NONE carries: NONE would have dropped the user's).
    std::string recorder_preload;
    std::string output_directory;  // STACKSAGE_OUTPUT, for the messages
};

struct LaunchPlan {
    LauncherKind kind = LauncherKind::None;
    std::string program;            // the launcher as the command names it ("mpirun", "/opt/ompi/bin/mpiexec")
    std::size_t program_index = 0;  // its position in the command (after wrappers)
    RemoteRecording remote = RemoteRecording::NotApplicable;
    std::string how;  // the mechanism: "OMPI_MCA_mca_base_env_list", "-x", "-genv", "--env", ...

    std::vector<std::string> command;              // to run (the original, or rewritten)
    std::vector<EnvironmentSetting> environment;   // to set for it, beyond the recorder's own
    std::vector<std::string> forwarded_variables;  // names of what the launcher carries

    // What the command says about where it runs; for run.json, so that a
    // report can tell hosts that recorded nothing.
    std::vector<std::string> hosts;  // from -H/--host/-hosts and the host file, in order, unique;
                                     // else the batch allocation's (batch_allocation.hpp)
    std::string hosts_from;          // "command", "SLURM_JOB_NODELIST", "PBS_NODEFILE"; "" when unknown
    std::string hostfile;            // as given
    long processes = -1;             // -np/-n/--ntasks; -1 when not given
    long nodes = -1;                 // Flux's -N; -1 when not given

    std::vector<std::string> notes;     // said before the job unless -q
    std::vector<std::string> warnings;  // said before the job always: ranks will be missing
};

// Recognises the launcher of `command` and plans how the recorder reaches
// the ranks it starts. `command` is returned unchanged when nothing needs to
// change; the plan never removes what the user wrote.
LaunchPlan plan_launch(const std::vector<std::string>& command, const RecorderSetup& recorder,
                       const EnvironmentReader& getenv);

// The recorder's variables as `stacksage run` set them in this process's
// environment: LD_PRELOAD, every STACKSAGE_*, and a sanitized build's
// options variable when given.
std::vector<EnvironmentSetting> recorder_variables_from_environment(const char* sanitizer_options_variable);

}  // namespace stacksage::cli
