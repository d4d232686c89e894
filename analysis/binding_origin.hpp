// Who bound a process: the launcher (mpirun's --bind-to, its default
// binding, srun --cpu-bind), or what started it (taskset, numactl, a parent
// with a narrow mask), or nobody.
//
// A suggestion must name the real cause: "restricted by taskset" is wrong
// advice for a rank Open MPI bound to one core by default (np <= 2), whose
// fix is a launcher option (--bind-to none, or --map-by ppr:1:node:PE=2).
// The evidence is the mask the program started with (the last exec'ed
// image's process_start) against its parent's: a launcher parent with a
// wider mask bound it between fork and exec. Under Slurm the task's parent
// is slurmstepd, which the recorder does not see (slurmd starts it, not the
// job): there the evidence is what task/affinity writes into each task's
// environment (SLURM_CPU_BIND, SLURM_CPU_BIND_TYPE, SLURM_CPU_BIND_LIST),
// with SLURM_CPUS_PER_TASK.
#pragma once

#include <string>
#include <string_view>

#include "analysis/run_view.hpp"

namespace stacksage {

enum class BindingSource : std::uint8_t {
    None,       // started on every available CPU of its node (or unknown)
    Launcher,   // narrowed by its launcher parent before exec
    Inherited,  // started narrow: taskset, numactl, a batch system's cgroup-free binding, its parent
};

struct BindingOrigin {
    BindingSource source = BindingSource::None;
    Cpuset cpus;                    // the mask it started with (when narrowed)
    std::string launcher;           // the launcher's name ("mpirun", "prted", "srun")
    // The launcher's own policy: neither its command line nor the rank's
    // environment asked for a binding (Open MPI binds to core for np <= 2,
    // to package or NUMA node above).
    bool launcher_default = false;
    // How the launcher bound, where its own record says so: Slurm's
    // task/affinity plugin leaves its binding in the task's environment
    // ("Slurm's task/affinity binding: SLURM_CPU_BIND=quiet,mask_cpu:0x1;
    // SLURM_CPUS_PER_TASK unset: 1 CPU per task; srun --cpus-per-task and
    // --cpu-bind change it"). "" otherwise.
    std::string launcher_detail;
};

// \return where process p's starting mask came from.
BindingOrigin binding_origin(const RunView& view, const ProcessView& p);

// True when a launcher command line or binding variable asks for a binding
// or mapping: --bind-to, --map-by, --cpu-set, -bind-to, -map-by, --cpu-bind,
// OMPI_MCA_hwloc_base_binding_policy, SLURM_CPU_BIND, ...
bool asks_for_binding(std::string_view command_line);

}  // namespace stacksage
