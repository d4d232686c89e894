// CPU quotas: a cgroup's bandwidth limit (cgroup v1 cpu.cfs_quota_us per
// cpu.cfs_period_us, v2 cpu.max) lets a job use quota / period CPUs' worth
// of time per period, whatever its cpuset offers; threads that want more
// are stopped until the next period (throttled). The recorder reads the
// quota and the cgroup's throttling counters at each process's start and
// end (docs/event-log.md).
//
// Per node and quota cgroup: the periods and throttled periods and time
// between the first start and the last end of its application processes
// (the counters are the cgroup's, shared by its processes, so they are not
// summed per process). Throttled for at least kMinThrottledNs in all:
// `cpu-quota-throttled`, a warning, with how many periods of how many, for
// how long, the quota in CPUs and the threads that computed at once.
// The quota also counts as the node's capacity in the over-subscription
// and reservation checks (NodeView::cpu_quota).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/finding.hpp"
#include "analysis/node_load.hpp"
#include "analysis/run_view.hpp"

namespace stacksage {

// Less throttling than this in all is not worth a warning: one period of a
// default 100 ms period is up to that long.
inline constexpr std::int64_t kMinThrottledNs = 10'000'000;

// loads[i] is compute_node_load(view, i).
std::vector<Finding> check_cpu_quota(const RunView& view, const std::vector<NodeLoad>& loads);

}  // namespace stacksage
