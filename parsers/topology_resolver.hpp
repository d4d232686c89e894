// Which topology each host of a run gets, in the run's merged model: the
// snapshot its processes published (topology.snap, mapped: no XML parsed),
// else its topology.xml through hwloc (identical files loaded once: only
// the HostName differs between the nodes of a homogeneous cluster), else a
// node rebuilt from the cpusets its processes saw. Every fallback is noted.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "core/model_copy.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/process_log.hpp"
#include "parsers/run_directory.hpp"
#include "parsers/run_loader.hpp"

namespace stacksage {

// What a host's processes saw, for a node rebuilt without a topology.
struct CpusetsSeen {
    Cpuset allowed;  // their cgroups' cpusets
    Cpuset online;   // the CPUs the kernel had online
    Cpuset masks;    // every mask of every thread
    void add(const ProcessImage& image);
};

class TopologyResolver {
public:
    // Nodes go under run_root in run; notes are appended to notes.
    TopologyResolver(Model& run, ComponentId run_root, std::vector<LoadNote>& notes);

    // Grafts the host's Node from its topology.snap or topology.xml (the
    // same files in this order) under the run's root, named after the host.
    // \return the Node, or kNoComponent when the host has no usable topology
    //         file (noted: a missing topology.xml as a warning, one that
    //         cannot be loaded as an error).
    ComponentId graft(const ScannedHost& host);

    // A node rebuilt from what the processes saw: allowed CPUs from the
    // cgroup (or the masks), the node's size from the online CPUs; each CPU
    // one core of one hardware thread.
    // \return the Node.
    ComponentId rebuild_from_cpusets(const std::string& host, const CpusetsSeen& seen);

    std::size_t topologies_loaded() const { return topologies_loaded_; }  // distinct files given to hwloc
    std::size_t snapshots_mapped() const { return snapshots_mapped_; }

private:
    bool usable_snapshot_file(const ScannedHost& host);
    // shared: the attribute lists of topo's earlier copies, to share (the
    // cache's topologies; a snapshot is one host's).
    ComponentId adopt_node(const Model& topo, const ScannedHost& host, SharedSubtreeAttributes* shared = nullptr);
    void note(LoadNote::Level level, std::string file, std::string message);

    Model& run_;
    ComponentId root_;
    std::vector<LoadNote>& notes_;
    const RunModelKeys& keys_;  // the run model's keys (Model::intern_run_keys)
    // By topology_cache_key: the topology, and the attribute lists its
    // copies in the run share (60 % of a large run's attributes otherwise).
    struct CachedTopology {
        std::optional<Model> model;
        SharedSubtreeAttributes shared;
    };
    std::unordered_map<std::string, CachedTopology> cache_;
    std::size_t topologies_loaded_ = 0;
    std::size_t snapshots_mapped_ = 0;
};

}  // namespace stacksage
