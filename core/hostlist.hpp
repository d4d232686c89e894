// Slurm's compact host lists ("n[001-003,7],gpu[1-2]-ib"), as SLURM_JOB_NODELIST,
// SLURM_STEP_NODELIST and `srun -w` write them, expanded into host names.
// (core/hostlist_format.hpp writes the compact form back.)
//
// The grammar is Slurm's: hosts separated by commas outside brackets; a host
// is text with any number of bracket groups, each a comma-separated list of
// numbers and ranges "lo-hi"; several groups expand as their product
// ("r[1-2]n[1-2]": r1n1, r1n2, r2n1, r2n2). Each range keeps the zero
// padding of its lower bound ("001-003,7": 001, 002, 003, 7).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace stacksage {

// The most host names a list may expand to: more than any machine has nodes,
// few enough that an edited "n[0-999999999999]" cannot take the memory.
inline constexpr std::size_t kMaxHostlistHosts = 1'000'000;

// \return the host names, in the order written (duplicates kept).
// \return an Error that quotes the list and says what is wrong with it and
//         where (an unclosed bracket, a range that runs backwards, an empty
//         name, more than max_hosts names).
Result<std::vector<std::string>> parse_hostlist(std::string_view list, std::size_t max_hosts = kMaxHostlistHosts);

}  // namespace stacksage
