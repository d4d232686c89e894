// The node's topology, discovered once per node and shared by every process.
//
// On a 128-rank node each traced process needs the topology; discovering it
// with hwloc in each costs milliseconds and 128 sweeps of /sys. The first
// process discovers it and publishes a snapshot (core/snapshot.hpp); all
// others map that snapshot in microseconds.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

struct NodeTopology {
    Model model;
    bool discovered = false;  // this call ran the discovery (no usable snapshot was there)
    std::string note;         // why an existing snapshot was not used, or could not be published; "" if neither
};

// The attribute on the model's root naming the boot the topology was found
// in (/proc/sys/kernel/random/boot_id): a snapshot from another boot is stale.
inline constexpr const char* kBootIdKey = "boot_id";

// How long a caller tries for the lock on `path`.lock before it gives up
// waiting: it then uses its own discovery and does not publish it.
inline constexpr std::chrono::milliseconds kSnapshotLockWait{2000};

// Maps the snapshot at `path` when it is usable (valid, same host name and
// boot); otherwise discovers the topology with `discover` (default: this
// machine through hwloc), publishes it at `path` atomically and returns it.
// Concurrent callers discover once: an exclusive lock on `path`.lock
// serialises discovery, and a snapshot published while a caller waited is used.
// Never blocks: a FIFO at `path` or at the lock is refused (not a regular
// file), and a lock held elsewhere is waited for kSnapshotLockWait at most;
// the caller then discovers for itself and publishes nothing (said in `note`).
// \return the topology, or the Error of the discovery. Failing to publish is
//         not an error (the model is returned, with the reason in `note`).
Result<NodeTopology> load_or_publish_node_topology(const std::string& path,
                                                   const std::function<Result<Model>()>& discover = {});

// This boot's id, or "" when the kernel does not tell.
std::string current_boot_id();

}  // namespace stacksage
