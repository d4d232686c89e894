// One process's part of the run model (core/run_model_schema.hpp), built from
// its interpreted logs (parsers/process_log.hpp): the Process component, a
// Flow per thread, their MayRunOn intervals on the node's PUs, RanOn where
// they were seen running, and WaitedFor paths for the waits they made.
//
// The one builder of that part of the model. The analyzer's loader
// (run_loader.hpp) adds every process of a run with it, and the recorder's
// model writer (preload/model_writer.cpp) adds the process's own at its exit:
// the model a process writes is the analyzer's model of that process image,
// less what only the analyzer adds (the sampling summary's paths, the
// earlier images of an exec'ed process, whose streams the writer does not
// read).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "parsers/process_log.hpp"

namespace stacksage {

struct RunModelKeys;

// The process a ProcessModelBuilder added.
struct AddedProcess {
    ComponentId process = kNoComponent;
    // Its flows by tid (the sampling summary names threads by tid); the
    // flow of unseen threads, with no tid of its own, is not among them.
    std::unordered_map<std::int64_t, ComponentId> flow_of_tid;
};

class ProcessModelBuilder {
public:
    // node: a Node component of model; the flows' paths point to its PUs
    // (Thread components, by OS index). Interns the run model's keys.
    ProcessModelBuilder(Model& model, ComponentId node);

    // Adds the process whose images (one pid's, before and after exec: at
    // least one, in start order) were recorded on host `host`. The images
    // are consumed as the model takes them: the main thread's mask history
    // moves into its flow, threads seen without CPU time get their share of
    // the time no thread accounts for.
    AddedProcess add_process(std::string_view host, std::vector<ProcessImage>& images);

    // CPUs the masks named that the node does not have (their paths are
    // left out), over every process added.
    const Cpuset& missing_cpus() const { return missing_cpus_; }
    // Flows added, over every process.
    std::size_t flows_added() const { return flows_added_; }

private:
    struct Interval;
    struct MergedMainThread;

    void add_process_attributes(ComponentId p, std::string_view host, const std::vector<ProcessImage>& images);
    void add_cpu_quota(ComponentId p, const ProcessImage& first, const ProcessImage& last);
    MergedMainThread merge_main_thread(std::vector<ProcessImage>& images);
    ComponentId add_flow(ComponentId process, const ThreadRecord& t, std::string_view kind);
    void add_may_run_on(ComponentId flow, const std::vector<Interval>& intervals);
    void set_cause(DataPathId dp, const MaskChange& c);
    void add_ran_on(ComponentId flow, int first_cpu, int last_cpu);
    void add_unseen_flow(ComponentId process, const ProcessImage& first, const ThreadRecord& main,
                         std::int64_t unseen);
    void add_waits(ComponentId process, const std::vector<std::pair<const ThreadRecord*, ComponentId>>& waiters,
                   const std::vector<ProcessImage>& images,
                   const std::unordered_map<std::int64_t, ComponentId>& flow_of_tid);

    Model& model_;
    const RunModelKeys& keys_;
    std::vector<ComponentId> pu_by_cpu_;  // the node's PUs by OS index; kNoComponent for gaps
    Cpuset missing_cpus_;
    std::size_t flows_added_ = 0;
};

}  // namespace stacksage
