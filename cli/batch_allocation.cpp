#include "cli/batch_allocation.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "core/hostlist.hpp"

namespace stacksage::cli {

std::vector<std::string> expand_slurm_host_list(const std::string& list) {
    // One parser of Slurm's notation for the whole tool (core/hostlist.hpp).
    Result<std::vector<std::string>> hosts = parse_hostlist(list);
    if (!hosts) return {};
    std::vector<std::string> unique;
    for (auto& h : *hosts)
        if (std::find(unique.begin(), unique.end(), h) == unique.end()) unique.push_back(std::move(h));
    return unique;
}

BatchAllocation batch_allocation(const std::function<const char*(const char*)>& getenv) {
    BatchAllocation allocation;
    if (const char* list = getenv("SLURM_JOB_NODELIST"); list && *list) {
        allocation.source = "SLURM_JOB_NODELIST";
        allocation.hosts = expand_slurm_host_list(list);
        return allocation;
    }
    if (const char* file = getenv("PBS_NODEFILE"); file && *file) {
        allocation.source = "PBS_NODEFILE";
        std::ifstream in(file);
        std::string host;
        while (in >> host)  // one line per slot: each host once
            if (std::find(allocation.hosts.begin(), allocation.hosts.end(), host) == allocation.hosts.end())
                allocation.hosts.push_back(host);
    }
    return allocation;
}

}  // namespace stacksage::cli
