// Building run models by hand (core/run_model_schema.hpp's shape), for the
// analysis tests: nodes with cores and hardware threads, processes, flows and
// their MayRunOn intervals, without event logs or hwloc.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.hpp"
#include "core/run_model_schema.hpp"

namespace stacksage::testing {

class RunModelBuilder {
public:
    RunModelBuilder() { root_ = model_.add_component(ComponentType::Topology, kNoComponent, "run", "test-run"); }

    // A node of `cores` cores with `smt` hardware threads each, CPU numbers
    // as Linux gives them on x86 (core c has CPUs c, c + cores, ...).
    // `allowed`: the available CPUs (empty: all).
    ComponentId add_node(const std::string& host, unsigned cores, unsigned smt = 1, const Cpuset& allowed = {}) {
        const unsigned total = cores * smt;
        Cpuset complete = Cpuset::range(0, total - 1);
        Cpuset avail = allowed.empty() ? complete : allowed;
        const ComponentId node = model_.add_component(ComponentType::Node, root_, {}, host, 0);
        model_.set_attr(node, keys::hostname, std::string_view(host));
        model_.set_attr(node, keys::cpuset, avail);
        model_.set_attr(node, keys::complete_cpuset, complete);
        model_.set_attr(node, model_.key(run_keys::job_restricted), static_cast<std::int64_t>(avail == complete ? 0 : 1));
        for (unsigned c = 0; c < cores; ++c) {
            Cpuset core_cpus;
            for (unsigned t = 0; t < smt; ++t)
                if (avail.contains(c + t * cores)) core_cpus.set(c + t * cores);
            if (core_cpus.empty()) continue;
            const ComponentId core = model_.add_component(ComponentType::Core, node, {}, {}, c);
            model_.set_attr(core, keys::cpuset, core_cpus);
            for (unsigned cpu : core_cpus) {
                const ComponentId pu = model_.add_component(ComponentType::Thread, core, {}, {}, cpu);
                Cpuset one;
                one.set(cpu);
                model_.set_attr(pu, keys::cpuset, one);
            }
        }
        return node;
    }

    struct ProcessSpec {
        std::string host{};
        std::int64_t pid = 0;
        std::int64_t rank = -1;
        std::string launcher{};                      // non-empty: a launcher
        std::string exe = "/opt/app/bin/app";
        std::int64_t start_ns = 1'000'000'000;
        std::int64_t end_ns = 11'000'000'000;        // 10 s
        bool mpi = false;
        std::vector<std::pair<std::string, std::string>> env{};
        std::vector<std::pair<std::string, std::string>> identity{};
    };

    ComponentId add_process(const ProcessSpec& s) {
        const ComponentId p = model_.add_component(ComponentType::Process, kNoComponent,
                                                   to_string(s.launcher.empty() ? ProcessKind::Process : ProcessKind::Launcher),
                                                   s.exe.substr(s.exe.rfind('/') + 1), s.pid);
        model_.set_attr(p, keys::hostname, std::string_view(s.host));
        model_.set_attr(p, model_.key(run_keys::pid), s.pid);
        if (s.rank >= 0) model_.set_attr(p, model_.key(run_keys::rank), s.rank);
        if (!s.launcher.empty()) model_.set_attr(p, model_.key(run_keys::launcher), std::string_view(s.launcher));
        model_.set_attr(p, model_.key(run_keys::exe), std::string_view(s.exe));
        model_.set_attr(p, keys::start_ns, s.start_ns);
        model_.set_attr(p, keys::end_ns, s.end_ns);
        model_.set_attr(p, model_.key(run_keys::end_how), std::string_view("exit"));
        if (s.mpi) model_.set_attr(p, model_.key(run_keys::mpi_init_ns), s.start_ns + 1000);
        for (const auto& [k, v] : s.env)
            model_.set_attr(p, model_.key(std::string(run_keys::env_prefix) + k), std::string_view(v));
        for (const auto& [k, v] : s.identity)
            model_.set_attr(p, model_.key(std::string(run_keys::identity_prefix) + k), std::string_view(v));
        hosts_of_.push_back({p, s.host});
        return p;
    }

    // A mask held from start_ns to end_ns; set_by names what set it
    // ("affinity": a call, with the call, its caller and module).
    struct Interval {
        std::int64_t start_ns, end_ns;
        Cpuset cpus;
        std::string set_by{};
        std::string api{};
        std::int64_t caller_tid = -1;
        std::string caller_module{};
    };

    struct FlowSpec {
        std::int64_t tid = 0;
        bool main = false;
        std::string creator_module{};                // "" for the main thread
        std::vector<Interval> intervals{};           // empty: one interval over the lifetime on `cpus`
        Cpuset cpus{};
        std::int64_t start_ns = -1, end_ns = -1;     // -1: the process's
        std::int64_t cpu_time_us = -1;               // -1: unknown; default below: fully busy
        bool busy = true;                            // with cpu_time_us = -1: busy the whole time
        // Recorded waits (pthread_join), as WaitedFor paths to the process:
        // {start, end, the flow's CPU time in ns when the wait began (-1: unknown)}.
        std::vector<std::array<std::int64_t, 3>> waits{};
    };

    ComponentId add_flow(ComponentId process, const FlowSpec& s) {
        const std::int64_t start = s.start_ns >= 0 ? s.start_ns : *model_.get_int(process, keys::start_ns);
        const std::int64_t end = s.end_ns >= 0 ? s.end_ns : *model_.get_int(process, keys::end_ns);
        const ComponentId f = model_.add_component(ComponentType::Flow, process,
                                                   to_string(s.main ? FlowKind::Main : FlowKind::Thread), {}, s.tid);
        model_.set_attr(f, model_.key(run_keys::tid), s.tid);
        if (!s.creator_module.empty())
            model_.set_attr(f, model_.key(run_keys::creator_module), std::string_view(s.creator_module));
        model_.set_attr(f, keys::start_ns, start);
        model_.set_attr(f, keys::end_ns, end);
        std::int64_t cpu = s.cpu_time_us;
        if (cpu < 0 && s.busy) cpu = (end - start) / 1000;
        if (cpu >= 0) {
            model_.set_attr(f, model_.key(run_keys::utime_us), cpu);
            model_.set_attr(f, model_.key(run_keys::stime_us), std::int64_t{0});
        }
        for (const auto& [wait_start, wait_end, cpu_ns] : s.waits) {
            const DataPathId dp = model_.add_datapath(f, process, model_.datapath_type(run_keys::waited_for));
            model_.set_attr(dp, keys::start_ns, wait_start);
            model_.set_attr(dp, keys::end_ns, wait_end);
            if (cpu_ns >= 0) model_.set_attr(dp, model_.key(run_keys::wait_cpu_ns), cpu_ns);
        }
        std::vector<Interval> intervals = s.intervals;
        if (intervals.empty()) intervals.push_back({start, end, s.cpus});
        const std::string host = host_of(process);
        for (const Interval& iv : intervals)
            for (unsigned c : iv.cpus) {
                const ComponentId pu = pu_of(host, c);
                if (pu == kNoComponent) continue;
                const DataPathId dp = model_.add_datapath(f, pu, DataPathType::MayRunOn);
                model_.set_attr(dp, keys::start_ns, iv.start_ns);
                model_.set_attr(dp, keys::end_ns, iv.end_ns);
                if (!iv.set_by.empty()) model_.set_attr(dp, model_.key(run_keys::set_by), std::string_view(iv.set_by));
                if (!iv.api.empty()) model_.set_attr(dp, model_.key(run_keys::set_by_api), std::string_view(iv.api));
                if (iv.caller_tid > 0) model_.set_attr(dp, model_.key(run_keys::set_by_tid), iv.caller_tid);
                if (!iv.caller_module.empty())
                    model_.set_attr(dp, model_.key(run_keys::set_by_module), std::string_view(iv.caller_module));
            }
        return f;
    }

    // A process with `threads` busy flows (the main one first), all on `cpus`,
    // the others created by `module`.
    ComponentId add_simple_process(const std::string& host, std::int64_t pid, std::int64_t rank, unsigned threads,
                                   const Cpuset& cpus, const std::string& module = "/usr/lib/x86_64-linux-gnu/libgomp.so.1") {
        ProcessSpec ps;
        ps.host = host;
        ps.pid = pid;
        ps.rank = rank;
        const ComponentId p = add_process(ps);
        for (unsigned t = 0; t < threads; ++t) {
            FlowSpec fs;
            fs.tid = pid + t;
            fs.main = t == 0;
            if (t > 0) fs.creator_module = module;
            fs.cpus = cpus;
            add_flow(p, fs);
        }
        return p;
    }

    Model& model() { return model_; }

private:
    std::string host_of(ComponentId process) const {
        for (const auto& [p, h] : hosts_of_)
            if (p == process) return h;
        return {};
    }
    ComponentId pu_of(const std::string& host, unsigned cpu) const {
        for (ComponentId node : model_.components_of_type(ComponentType::Node))
            if (model_.name(node) == host) return model_.find(ComponentType::Thread, cpu, node);
        return kNoComponent;
    }

    Model model_;
    ComponentId root_;
    std::vector<std::pair<ComponentId, std::string>> hosts_of_;
};

}  // namespace stacksage::testing
