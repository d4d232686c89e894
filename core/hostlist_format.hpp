// Host names in Slurm's compact hostlist notation: "n[001-128,130]".
//
// A 1,000-node job's reports name groups of nodes; a list of a thousand
// names helps nobody. The notation is the one HPC users already read in
// `squeue` and `scontrol show hostnames`, so a range can be pasted back
// into Slurm (and read by parse_hostlist in core/hostlist.hpp).
#pragma once

#include <string>
#include <vector>

namespace stacksage {

// \return the hosts in compact form: names that differ only in their last
//         number share one prefix and suffix and are written as a bracket
//         of ranges ("n[1-3,7]", "rack[01-04]-ib"); numbers are sorted
//         numerically and keep their zero padding (n008-n010 is "n[008-010]";
//         n9 and n10 join as "n[9-10]", but n9 and n010 do not); several
//         prefixes are joined by commas in name order ("a[1-2],b7"). A name
//         without a number, or with characters of the notation itself (",",
//         "[", "]"), stands alone. Duplicates are dropped; "" for no host.
std::string format_hostlist(std::vector<std::string> hosts);

}  // namespace stacksage
