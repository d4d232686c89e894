#include "preload/process_model_builder.hpp"

#include <algorithm>
#include <map>

#include "core/run_model_schema.hpp"
#include "parsers/process_log.hpp"

namespace stacksage::preload {

namespace {

using event_schema::EventKind;

// When a thread's flow ends: its own end, or, for a thread that ran until
// the image ended, the last event seen (a thread running on through exit may
// have written after process_end).
std::int64_t flow_end(const ThreadRecord& t, const ProcessImage& image) {
    if (t.ended_itself || t.end_t < image.end_t) return t.end_t;
    return std::max(image.last_event_t, t.end_t);
}

class ProcessModelBuilder {
public:
    ProcessModelBuilder(Model& model, ComponentId node, const ProcessImage& image)
        : model_(model), node_(node), image_(image) {}

    ComponentId build() {
        add_process();
        for (const ThreadRecord& t : image_.threads) flows_.push_back(add_flow(t));
        open_.resize(flows_.size());
        place_flows();
        for (std::size_t i = 0; i < flows_.size(); ++i)
            close(i, flow_end(image_.threads[i], image_));
        return process_;
    }

    const std::vector<unsigned>& unknown_cpus() const { return unknown_cpus_; }

private:
    // The MayRunOn paths of a flow's current mask, still without end_ns.
    struct Open {
        std::vector<DataPathId> paths;
        Cpuset cpuset;
        bool is_open = false;
    };

    // A change of a flow's mask, in the log's order.
    struct Placement {
        std::uint32_t order;
        std::size_t flow;
        const MaskChange* change;
    };

    void add_process() {
        const ProcessImage& p = image_;
        process_ = model_.add_component(ComponentType::Process, kNoComponent);
        model_.set_name(process_, p.exe.substr(p.exe.rfind('/') + 1));
        model_.set_os_index(process_, p.pid);
        model_.set_attr(process_, model_.key("pid"), p.pid);
        model_.set_attr(process_, model_.key("ppid"), p.ppid);
        model_.set_attr(process_, keys::hostname, std::string_view(p.host));
        model_.set_attr(process_, model_.key("exe"), std::string_view(p.exe));
        if (p.environment_rank >= 0) model_.set_attr(process_, model_.key("rank"), p.environment_rank);
        if (!p.launcher.empty()) model_.set_attr(process_, model_.key("launcher"), std::string_view(p.launcher));
        model_.set_attr(process_, keys::start_ns, p.start_t);
        // The mask the process started with: its main thread's first.
        if (!p.threads.empty() && p.threads.front().is_main && !p.threads.front().masks.empty() &&
            p.threads.front().masks.front().reason == EventKind::process_start)
            model_.set_attr(process_, keys::cpuset, p.threads.front().masks.front().cpuset);
        if (p.cgroup_cpuset) model_.set_attr(process_, model_.key("cgroup_cpuset"), *p.cgroup_cpuset);
        // The cgroups' CPU quota as the process started (its counters at the
        // end are the run loader's business: the model is written after them).
        if (p.quota_at_start.has_quota()) {
            model_.set_attr(process_, model_.key(run_keys::cpu_quota_us), p.quota_at_start.quota_us);
            model_.set_attr(process_, model_.key(run_keys::cpu_period_us), p.quota_at_start.period_us);
            if (!p.cpu_quota_cgroup.empty())
                model_.set_attr(process_, model_.key(run_keys::cpu_quota_cgroup), std::string_view(p.cpu_quota_cgroup));
        }
        if (p.mpi_rank >= 0) model_.set_attr(process_, model_.key("mpi_rank"), p.mpi_rank);
        if (p.mpi_size >= 0) model_.set_attr(process_, model_.key("mpi_size"), p.mpi_size);
        if (p.end_event == EventKind::process_end) {
            model_.set_attr(process_, keys::end_ns, p.end_t);
            model_.set_attr(process_, model_.key("end_how"), std::string_view(p.end_how));
            model_.set_attr(process_, model_.key("exit_status"), p.exit_status.value_or(-1));
        } else if (p.end_event == EventKind::signal) {
            model_.set_attr(process_, keys::end_ns, p.end_t);
            model_.set_attr(process_, model_.key("end_how"), std::string_view("signal"));
            model_.set_attr(process_, model_.key("signal"), p.end_signal);
        } else {
            model_.set_attr(process_, keys::end_ns, p.last_event_t);
        }
    }

    ComponentId add_flow(const ThreadRecord& t) {
        ComponentId f = model_.add_component(ComponentType::Flow, process_, "thread", {}, t.tid);
        model_.set_attr(f, model_.key("tid"), t.tid);
        model_.set_attr(f, keys::start_ns, t.start_t);
        if (t.is_main) {
            model_.set_kind(f, "main-thread");
        } else if (t.discovered) {
            // A thread the recorder did not see start (clone, or started before it).
            model_.set_attr(f, model_.key("untracked"), std::int64_t{1});
        } else {
            model_.set_attr(f, model_.key("seq"), t.seq);
            model_.set_attr(f, model_.key("creator_tid"), t.creator_tid);
            model_.set_attr(f, model_.key("creator_module"), t.creator_module);
            model_.set_attr(f, model_.key("start_module"), t.start_module);
            if (t.attr_cpuset) model_.set_attr(f, model_.key("attr_cpuset"), *t.attr_cpuset);
        }
        if (!t.name.empty()) model_.set_name(f, t.name);
        // CPU time read at the process's exit (the thread was never joined):
        // user + system in one clock.
        if (t.cpu_time_at_exit) {
            model_.set_attr(f, model_.key(run_keys::utime_us), t.utime_us);
            model_.set_attr(f, model_.key(run_keys::stime_us), std::int64_t{0});
            model_.set_attr(f, model_.key(run_keys::cpu_time_at_exit), std::int64_t{1});
            if (t.run_delay_ns >= 0) model_.set_attr(f, model_.key(run_keys::run_delay_ns), t.run_delay_ns);
        }
        if (!t.ended_itself) {
            model_.set_attr(f, keys::end_ns, flow_end(t, image_));
            return f;
        }
        model_.set_attr(f, keys::end_ns, t.end_t);
        model_.set_attr(f, model_.key("end_how"), std::string_view(t.end_how));
        if (!t.cpu_time_at_exit)
            for (const auto& [key, value] : {std::pair{run_keys::utime_us, t.utime_us},
                                             std::pair{run_keys::stime_us, t.stime_us},
                                             std::pair{run_keys::nvcsw, t.nvcsw},
                                             std::pair{run_keys::nivcsw, t.nivcsw},
                                             std::pair{run_keys::run_delay_ns, t.run_delay_ns}})
                if (value >= 0) model_.set_attr(f, model_.key(key), value);
        if (t.last_cpu >= 0) model_.set_attr(f, model_.key("last_cpu"), std::int64_t{t.last_cpu});
        return f;
    }

    // Every mask change of every flow, in the order the log recorded them,
    // so that the paths come in that order.
    void place_flows() {
        std::vector<Placement> placements;
        for (std::size_t i = 0; i < image_.threads.size(); ++i) {
            const ThreadRecord& t = image_.threads[i];
            for (const MaskChange& c : t.masks) placements.push_back({c.order, i, &c});
            if (t.end_mask) placements.push_back({t.end_mask->order, i, &*t.end_mask});
        }
        std::stable_sort(placements.begin(), placements.end(),
                         [](const Placement& a, const Placement& b) { return a.order < b.order; });
        for (const Placement& p : placements) set_mask(p.flow, *p.change);
    }

    ComponentId pu(unsigned cpu) {
        if (auto it = pus_.find(cpu); it != pus_.end()) return it->second;
        ComponentId id = model_.find(ComponentType::Thread, cpu, node_);
        if (id == kNoComponent && std::find(unknown_cpus_.begin(), unknown_cpus_.end(), cpu) == unknown_cpus_.end())
            unknown_cpus_.push_back(cpu);
        pus_[cpu] = id;
        return id;
    }

    void close(std::size_t flow, std::int64_t t) {
        Open& open = open_[flow];
        for (DataPathId p : open.paths) model_.set_attr(p, keys::end_ns, t);
        open = Open{};
    }

    void set_mask(std::size_t flow, const MaskChange& change) {
        // An empty mask is no placement (the recorder writes null when it
        // does not know one).
        if (change.cpuset.empty()) return;
        if (open_[flow].is_open && open_[flow].cpuset == change.cpuset) return;
        close(flow, change.t);
        Open& open = open_[flow];
        open.is_open = true;
        open.cpuset = change.cpuset;
        const AttrKey reason = model_.key("reason");
        for (unsigned cpu : change.cpuset) {
            const ComponentId target = pu(cpu);
            if (target == kNoComponent) continue;
            const DataPathId p = model_.add_datapath(flows_[flow], target, DataPathType::MayRunOn);
            model_.set_attr(p, keys::start_ns, change.t);
            model_.set_attr(p, reason, event_schema::event_name(change.reason));
            if (change.reason == event_schema::EventKind::affinity) {
                if (!change.api.empty()) model_.set_attr(p, model_.key(run_keys::set_by_api), change.api);
                if (change.caller_tid > 0) model_.set_attr(p, model_.key(run_keys::set_by_tid), change.caller_tid);
                if (!change.caller_module.empty())
                    model_.set_attr(p, model_.key(run_keys::set_by_module), change.caller_module);
            }
            open.paths.push_back(p);
        }
    }

    Model& model_;
    ComponentId node_;
    const ProcessImage& image_;
    ComponentId process_ = kNoComponent;
    std::vector<ComponentId> flows_;  // one per image_.threads
    std::vector<Open> open_;          // likewise
    std::map<unsigned, ComponentId> pus_;
    std::vector<unsigned> unknown_cpus_;
};

}  // namespace

ComponentId add_process_model(Model& model, ComponentId node, const ProcessImage& image,
                              std::vector<unsigned>* unknown_cpus) {
    ProcessModelBuilder builder(model, node, image);
    const ComponentId process = builder.build();
    if (unknown_cpus != nullptr) *unknown_cpus = builder.unknown_cpus();
    return process;
}

}  // namespace stacksage::preload
