// ProcessModelBuilder: one process's own model, grown from its events.
//
// The process becomes a Process component and each of its threads a Flow
// under it, in their own subtree apart from the hardware; each interval in
// which a thread was allowed to run on a PU becomes a MayRunOn DataPath from
// the Flow to that PU (a Thread component of the node's topology), with
// keys::start_ns and keys::end_ns. Affinity changes close the open intervals
// of their target and open new ones; so do the thread snapshots taken at
// MPI_Init and MPI_Finalize when they disagree with what is known (a mask
// changed behind our back).
//
// Events are applied in log order, one at a time (apply), so the same builder
// serves at exit (replaying the log) and, later, online.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.hpp"

namespace stacksage::preload {

class ProcessModelBuilder {
public:
    // node: the Node component of the host's topology in model.
    ProcessModelBuilder(Model& model, ComponentId node);

    // Applies one event of the schema in docs/event-log.md. Unknown events
    // and fields are ignored (newer writers may add them).
    void apply(const nlohmann::json& event);

    // Closes every interval still open at end_ns (the process's end, or the
    // last event seen when it ended abruptly).
    void finish(std::uint64_t end_ns);
    void finish() { finish(last_t_); }

    ComponentId process() const { return process_; }
    // The Flow of a thread id, or kNoComponent.
    ComponentId flow(int tid) const;
    // PUs the model did not have (named in a mask but absent from the topology).
    const std::vector<unsigned>& unknown_cpus() const { return unknown_cpus_; }

private:
    struct Open {
        std::vector<DataPathId> paths;  // MayRunOn paths without end_ns
        std::string cpuset;             // the mask they stand for, list form
    };

    ComponentId add_flow(int tid, std::uint64_t t);
    void set_mask(ComponentId flow, const std::string& cpuset, std::uint64_t t, const char* why);
    void close(ComponentId flow, std::uint64_t t);
    ComponentId pu(unsigned cpu);

    void on_process_start(const nlohmann::json& e, std::uint64_t t);
    void on_thread_start(const nlohmann::json& e, std::uint64_t t);
    void on_thread_end(const nlohmann::json& e, std::uint64_t t);
    void on_usage_at_exit(const nlohmann::json& e);
    void on_affinity(const nlohmann::json& e, std::uint64_t t);
    void on_snapshot(const nlohmann::json& e, std::uint64_t t, const char* why);
    void on_end(const nlohmann::json& e, std::uint64_t t);

    Model& model_;
    ComponentId node_;
    ComponentId process_ = kNoComponent;
    std::map<int, ComponentId> flows_;         // tid -> Flow
    std::map<std::string, ComponentId> by_pthread_;  // pthread handle -> Flow
    std::map<std::string, std::string> pending_names_;  // pthread handle -> name set before start
    std::map<std::uint32_t, Open> open_;       // Flow index -> its open intervals
    std::map<unsigned, ComponentId> pus_;
    std::vector<unsigned> unknown_cpus_;
    std::uint64_t last_t_ = 0;
};

}  // namespace stacksage::preload
