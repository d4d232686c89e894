// The hosts a batch system gave the job, as the launchers read them when
// the command names none (mpirun inside `salloc` or a PBS job uses every
// allocated node): recorded in run.json so that a host that ran ranks but
// recorded nothing can be told.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace stacksage::cli {

struct BatchAllocation {
    std::string source;              // "SLURM_JOB_NODELIST", "PBS_NODEFILE", or "" outside a batch job
    std::vector<std::string> hosts;  // in the batch system's order, each once
};

// Slurm's compressed host list ("n[01-03,07],gpu1", "r[1-2]-n[1-2]")
// expanded, in order; an empty list for text that is no host list.
std::vector<std::string> expand_slurm_host_list(const std::string& list);

// The allocation of the job this process runs in: Slurm's
// SLURM_JOB_NODELIST, else the hosts of PBS's PBS_NODEFILE.
BatchAllocation batch_allocation(const std::function<const char*(const char*)>& getenv);

}  // namespace stacksage::cli
