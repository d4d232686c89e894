#include "parsers/process_model_builder.hpp"

#include <algorithm>
#include <string>

#include "core/run_model_schema.hpp"
#include "core/saturating.hpp"
#include "parsers/command_line.hpp"
#include "parsers/live_warning.hpp"

namespace stacksage {

namespace {

std::string base_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

// What a process's threads other than the main one account for, over all
// its images: the process's totals (process_end) less these are the main
// thread's, which has no thread_end of its own (recorders before main_cpu_us,
// and for the context switches).
struct OtherThreadsTotals {
    std::int64_t cpu_us = 0, nvcsw = 0, nivcsw = 0;
    bool cpu_known = true, switches_known = true;  // false once a thread lacks the figure
    std::int64_t short_lived_without_figures = 0;   // threads under a millisecond, left out

    void add(const ThreadRecord& t) {
        // A thread only seen in a snapshot has no figures at all: leaving it
        // out keeps the main thread's known, at the price of counting the
        // other's time as the main thread's (an upper bound), where treating
        // it as unknown lost the main thread's time in every MPI run.
        if (t.discovered && t.utime_us < 0 && t.nvcsw < 0) return;
        // A thread that lived under a millisecond has no figures either
        // (the recorder skips reading them): the same choice, at a price of
        // at most that millisecond and a few switches per such thread.
        if (t.short_lived && t.utime_us < 0 && t.nvcsw < 0) {
            ++short_lived_without_figures;
            return;
        }
        if (t.utime_us >= 0 && t.stime_us >= 0)
            cpu_us = add_saturating(cpu_us, add_saturating(t.utime_us, t.stime_us));
        else
            cpu_known = false;
        if (t.nvcsw >= 0 && t.nivcsw >= 0) {
            nvcsw = add_saturating(nvcsw, t.nvcsw);
            nivcsw = add_saturating(nivcsw, t.nivcsw);
        } else {
            switches_known = false;
        }
    }

    // total - others, at least 0 (the process's figure was read before some
    // thread's, or a log is edited). Both are >= 0: no overflow.
    static std::int64_t left_of(std::int64_t total, std::int64_t others) {
        return std::max<std::int64_t>(0, total - others);
    }
};

// The CPU time of threads that ended before the recorder saw them (glibc's
// own threads for SIGEV_THREAD timers and aio, raw clones): the process's
// total less the main thread's, every other thread's and the recorder's own,
// when all of those are known. Threads under a millisecond have no figure of
// their own: each may hide up to 1 ms, and so much is left to them. What
// remains, 20 ms and a tenth of the total at least, is load the checks
// count: work no recorded thread did.
std::int64_t unseen_cpu_us(const ProcessImage& last, const OtherThreadsTotals& others) {
    if (last.utime_us < 0 || last.stime_us < 0 || last.main_cpu_us < 0 || !others.cpu_known) return 0;
    const std::int64_t total = add_saturating(last.utime_us, last.stime_us);
    std::int64_t known = add_saturating(last.main_cpu_us, others.cpu_us);
    known = add_saturating(known, std::max<std::int64_t>(0, last.recorder_cpu_us));
    known = add_saturating(known, std::min<std::int64_t>(others.short_lived_without_figures, INT64_MAX / 1000) * 1000);
    const std::int64_t unseen = total - known;
    return unseen >= 20'000 && unseen >= total / 10 ? unseen : 0;
}

}  // namespace

// An interval of a flow's mask history: [start, end) on the CPUs of cpuset.
struct ProcessModelBuilder::Interval {
    std::int64_t start, end;
    const Cpuset* cpuset;
    const MaskChange* change;  // what set it
};

// The main thread runs through every image of the process: its record over
// them all, with what the other threads account for.
struct ProcessModelBuilder::MergedMainThread {
    ThreadRecord main;
    OtherThreadsTotals others;
    bool cpu_time_derived = false;  // main's CPU time is the process's less the others'
};

namespace {

// Intervals [change, next change) of a mask history, closed at end.
template <typename Interval>
std::vector<Interval> intervals_of(const std::vector<MaskChange>& masks, std::int64_t start, std::int64_t end) {
    std::vector<Interval> out;
    for (std::size_t i = 0; i < masks.size(); ++i) {
        const std::int64_t s = i == 0 ? std::min(start, masks[0].t) : masks[i].t;
        const std::int64_t e = i + 1 < masks.size() ? masks[i + 1].t : end;
        if (e < s) continue;
        if (e == s && !(i + 1 == masks.size() && out.empty())) continue;  // zero-length, unless the only one
        out.push_back({s, std::max(s, e), &masks[i].cpuset, &masks[i]});
    }
    return out;
}

}  // namespace

ProcessModelBuilder::ProcessModelBuilder(Model& model, ComponentId node)
    : model_(model), keys_(model.intern_run_keys()) {
    for (ComponentId pu : model_.descendants_of_type(node, ComponentType::Thread)) {
        const std::int64_t os = model_.os_index(pu);
        if (os < 0) continue;
        if (static_cast<std::size_t>(os) >= pu_by_cpu_.size())
            pu_by_cpu_.resize(static_cast<std::size_t>(os) + 1, kNoComponent);
        pu_by_cpu_[static_cast<std::size_t>(os)] = pu;
    }
}

AddedProcess ProcessModelBuilder::add_process(std::string_view host, std::vector<ProcessImage>& images) {
    const ProcessImage& first = images.front();
    const ProcessImage& last = images.back();
    const bool is_launcher = !last.launcher.empty();
    AddedProcess added;
    const ComponentId p = model_.add_component(ComponentType::Process, kNoComponent,
                                               to_string(is_launcher ? ProcessKind::Launcher : ProcessKind::Process),
                                               base_name(last.exe), last.pid);
    added.process = p;
    add_process_attributes(p, host, images);

    MergedMainThread merged = merge_main_thread(images);
    const ThreadRecord& main = merged.main;
    const ComponentId main_flow = add_flow(p, main, to_string(FlowKind::Main));
    added.flow_of_tid[main.tid] = main_flow;
    if (merged.cpu_time_derived) model_.set(main_flow, keys_.cpu_time_derived, std::int64_t{1});
    add_may_run_on(main_flow, intervals_of<Interval>(main.masks, main.start_t, main.end_t));
    add_ran_on(main_flow, main.first_cpu, main.last_cpu);

    // CPU time no recorded thread accounts for: the threads the log only
    // glimpsed (an affinity call, a snapshot) without figures share it;
    // where there are none, an Unseen flow holds it.
    const std::int64_t unseen = unseen_cpu_us(last, merged.others);
    std::vector<ThreadRecord*> glimpsed;
    if (unseen > 0)
        for (ProcessImage& im : images)
            for (ThreadRecord& t : im.threads)
                if (!t.is_main && t.discovered && t.utime_us < 0 && t.nvcsw < 0) glimpsed.push_back(&t);
    for (ThreadRecord* t : glimpsed) {
        t->utime_us = unseen / static_cast<std::int64_t>(glimpsed.size());
        t->stime_us = 0;
    }
    if (unseen > 0 && glimpsed.empty()) add_unseen_flow(p, first, main, unseen);

    // Who waited (pthread_join), with their flows: resolved once every flow exists.
    std::vector<std::pair<const ThreadRecord*, ComponentId>> waiters;
    if (!main.waits.empty()) waiters.emplace_back(&main, main_flow);
    for (ProcessImage& im : images)
        for (ThreadRecord& t : im.threads) {
            if (t.is_main) continue;
            const ComponentId f = add_flow(p, t, to_string(t.discovered ? FlowKind::Discovered : FlowKind::Thread));
            add_may_run_on(f, intervals_of<Interval>(t.masks, t.start_t, t.end_t));
            add_ran_on(f, t.first_cpu, t.last_cpu);
            added.flow_of_tid[t.tid] = f;
            if (!t.waits.empty()) waiters.emplace_back(&t, f);
        }
    add_waits(p, waiters, images, added.flow_of_tid);
    return added;
}

// The process's own attributes: who it is, how it ended, what it used, and
// what it was given (masks, cgroup, quota, environment, MPI).
void ProcessModelBuilder::add_process_attributes(ComponentId p, std::string_view host,
                                                 const std::vector<ProcessImage>& images) {
    Model& m = model_;
    const RunModelKeys& k = keys_;
    const ProcessImage& first = images.front();
    const ProcessImage& last = images.back();
    const bool is_launcher = !last.launcher.empty();
    m.set_attr(p, keys::hostname, host);
    m.set(p, k.pid, last.pid);
    if (first.ppid >= 0) m.set(p, k.ppid, first.ppid);
    std::int64_t rank = -1;
    for (const ProcessImage& im : images)
        if (im.rank >= 0 && im.launcher.empty()) rank = im.rank;
    if (rank >= 0 && !is_launcher) m.set(p, k.rank, rank);
    if (is_launcher) m.set(p, k.launcher, std::string_view(last.launcher));
    m.set(p, k.exe, std::string_view(last.exe));
    m.set(p, k.cmdline, std::string_view(join_command(last.cmdline)));
    std::string logs;
    for (const ProcessImage& im : images) logs += (logs.empty() ? "" : " ") + im.file;
    m.set(p, k.log_file, std::string_view(logs));
    m.set_attr(p, keys::start_ns, first.start_t);
    m.set_attr(p, keys::end_ns, last.end_t);
    m.set(p, k.end_how, std::string_view(last.end_how));
    m.set(p, k.end_known, static_cast<std::int64_t>(last.end_known ? 1 : 0));
    if (!last.log_ends_early.empty()) m.set(p, k.log_ends_early, std::string_view(last.log_ends_early));
    if (!last.log_stop_error.empty()) m.set(p, k.log_stop_error, std::string_view(last.log_stop_error));
    if (last.exit_status) m.set(p, k.exit_status, *last.exit_status);
    if (last.utime_us >= 0) m.set(p, k.utime_us, last.utime_us);
    if (last.stime_us >= 0) m.set(p, k.stime_us, last.stime_us);
    if (last.nvcsw >= 0) m.set(p, k.nvcsw, last.nvcsw);
    if (last.nivcsw >= 0) m.set(p, k.nivcsw, last.nivcsw);
    if (last.cgroup_cpuset) m.set(p, k.cgroup_cpuset, *last.cgroup_cpuset);
    if (!last.threads.empty() && last.threads.front().is_main && !last.threads.front().masks.empty())
        m.set(p, k.program_start_cpuset, last.threads.front().masks.front().cpuset);
    if (last.start_t >= 0) m.set(p, k.program_start_ns, last.start_t);
    if (last.online_cpus) m.set(p, k.online_cpus, *last.online_cpus);
    add_cpu_quota(p, first, last);
    for (const auto& [name, value] : last.env)
        m.set_attr(p, m.key(std::string(run_keys::env_prefix) + name), std::string_view(value));
    for (const auto& [name, value] : last.identity)
        m.set_attr(p, m.key(std::string(run_keys::identity_prefix) + name), std::string_view(value));
    for (const ProcessImage& im : images) {
        add_live_warnings(m, p, im.live_warnings);
        if (im.mpi_size >= 0) m.set(p, k.mpi_size, im.mpi_size);
        if (im.mpi_thread_level >= 0) m.set(p, k.mpi_thread_level, im.mpi_thread_level);
        if (im.mpi_init_t >= 0) m.set(p, k.mpi_init_ns, im.mpi_init_t);
        if (im.mpi_finalize_t >= 0) m.set(p, k.mpi_finalize_ns, im.mpi_finalize_t);
    }
}

// The cgroups' CPU quota (as read last) and the throttling counters at the
// process's start (its first image) and end (its last).
void ProcessModelBuilder::add_cpu_quota(ComponentId p, const ProcessImage& first, const ProcessImage& last) {
    Model& m = model_;
    const RunModelKeys& k = keys_;
    const CpuQuotaReading& quota = last.quota_at_end.has_quota() ? last.quota_at_end : first.quota_at_start;
    if (!quota.has_quota()) return;
    m.set(p, k.cpu_quota_us, quota.quota_us);
    m.set(p, k.cpu_period_us, quota.period_us);
    const std::string& cgroup = last.cpu_quota_cgroup.empty() ? first.cpu_quota_cgroup : last.cpu_quota_cgroup;
    if (!cgroup.empty()) m.set(p, k.cpu_quota_cgroup, std::string_view(cgroup));
    const CpuQuotaReading& start = first.quota_at_start;
    if (start.periods >= 0) m.set(p, k.cpu_periods_start, start.periods);
    if (start.throttled >= 0) m.set(p, k.cpu_throttled_start, start.throttled);
    if (start.throttled_ns >= 0) m.set(p, k.cpu_throttled_ns_start, start.throttled_ns);
    const CpuQuotaReading& end = last.quota_at_end;
    if (end.periods >= 0) m.set(p, k.cpu_periods_end, end.periods);
    if (end.throttled >= 0) m.set(p, k.cpu_throttled_end, end.throttled);
    if (end.throttled_ns >= 0) m.set(p, k.cpu_throttled_ns_end, end.throttled_ns);
}

// The main thread over every image: its masks concatenate (moved out of the
// images), its waits too; its CPU time is the recorder's reading of it, else
// what the process's total leaves once the other threads took theirs, and
// likewise its context switches.
ProcessModelBuilder::MergedMainThread ProcessModelBuilder::merge_main_thread(std::vector<ProcessImage>& images) {
    const ProcessImage& first = images.front();
    const ProcessImage& last = images.back();
    MergedMainThread merged;
    ThreadRecord& main = merged.main;
    main.is_main = true;
    main.tid = last.pid;
    main.start_t = first.start_t;
    main.end_t = last.end_t;
    main.end_how = last.end_how;
    main.run_delay_ns = last.main_run_delay_ns;  // read for the main thread itself: nothing to derive
    main.run_slices = last.main_run_slices;
    for (ProcessImage& im : images) {
        for (ThreadRecord& t : im.threads) {
            if (!t.is_main) {
                merged.others.add(t);
                continue;
            }
            if (!t.name.empty()) main.name = t.name;
            for (MaskChange& c : t.masks)
                if (main.masks.empty() || !(main.masks.back().cpuset == c.cpuset)) main.masks.push_back(std::move(c));
            for (WaitRecord& w : t.waits) main.waits.push_back(std::move(w));
            if (main.first_cpu < 0) main.first_cpu = t.first_cpu;
            if (t.last_cpu >= 0) main.last_cpu = t.last_cpu;
            t.masks.clear();
        }
    }
    const OtherThreadsTotals& others = merged.others;
    if (last.main_cpu_us >= 0) {
        main.utime_us = last.main_cpu_us;
        main.stime_us = 0;
    } else if (last.utime_us >= 0 && last.stime_us >= 0 && others.cpu_known) {
        main.utime_us = OtherThreadsTotals::left_of(add_saturating(last.utime_us, last.stime_us), others.cpu_us);
        main.stime_us = 0;
        merged.cpu_time_derived = true;
    }
    if (last.nvcsw >= 0 && last.nivcsw >= 0 && others.switches_known) {
        main.nvcsw = OtherThreadsTotals::left_of(last.nvcsw, others.nvcsw);
        main.nivcsw = OtherThreadsTotals::left_of(last.nivcsw, others.nivcsw);
    }
    return merged;
}

ComponentId ProcessModelBuilder::add_flow(ComponentId process, const ThreadRecord& t, std::string_view kind) {
    Model& m = model_;
    const RunModelKeys& k = keys_;
    const ComponentId flow = m.add_component(ComponentType::Flow, process, kind, t.name, t.tid);
    m.set(flow, k.tid, t.tid);
    if (t.seq >= 0) m.set(flow, k.seq, t.seq);
    if (t.creator_tid >= 0) m.set(flow, k.creator_tid, t.creator_tid);
    if (!t.creator_module.empty()) m.set(flow, k.creator_module, t.creator_module);
    if (!t.start_module.empty()) m.set(flow, k.start_module, t.start_module);
    m.set_attr(flow, keys::start_ns, t.start_t);
    m.set_attr(flow, keys::end_ns, t.end_t);
    if (!t.end_how.empty()) m.set(flow, k.end_how, std::string_view(t.end_how));
    if (t.utime_us >= 0) m.set(flow, k.utime_us, t.utime_us);
    if (t.stime_us >= 0) m.set(flow, k.stime_us, t.stime_us);
    if (t.nvcsw >= 0) m.set(flow, k.nvcsw, t.nvcsw);
    if (t.nivcsw >= 0) m.set(flow, k.nivcsw, t.nivcsw);
    if (t.run_delay_ns >= 0) m.set(flow, k.run_delay_ns, t.run_delay_ns);
    if (t.run_slices >= 0) m.set(flow, k.run_slices, t.run_slices);
    if (t.cpu_time_at_exit) m.set(flow, k.cpu_time_at_exit, std::int64_t{1});
    if (t.untraced) m.set(flow, k.untraced, std::int64_t{1});
    if (t.attr_cpuset) m.set(flow, k.attr_cpuset, *t.attr_cpuset);
    if (t.create_t >= 0 && t.creator_cpu_ns >= 0) {
        m.set(flow, k.create_ns, t.create_t);
        m.set(flow, k.creator_cpu_ns, t.creator_cpu_ns);
    }
    if (!t.masks.empty()) m.set_attr(flow, keys::cpuset, t.masks.back().cpuset);
    ++flows_added_;
    return flow;
}

void ProcessModelBuilder::add_may_run_on(ComponentId flow, const std::vector<Interval>& intervals) {
    Model& m = model_;
    for (const Interval& iv : intervals) {
        // The paths of one interval (one per CPU) carry the same
        // attributes: the first has them, the others share its list.
        Model::SharedAttributes interval_attributes;
        for (unsigned cpu : *iv.cpuset) {
            if (cpu >= pu_by_cpu_.size()) {
                // Every CPU from here on is beyond the node: noted at once,
                // not one at a time (a mask may name thousands).
                Cpuset beyond = *iv.cpuset;
                if (!pu_by_cpu_.empty()) beyond -= Cpuset::range(0, static_cast<unsigned>(pu_by_cpu_.size() - 1));
                missing_cpus_ |= beyond;
                break;
            }
            const ComponentId pu = pu_by_cpu_[cpu];
            if (pu == kNoComponent) {
                missing_cpus_.set(cpu);
                continue;
            }
            const DataPathId dp = m.add_datapath(flow, pu, DataPathType::MayRunOn);
            if (!interval_attributes.empty()) {
                m.adopt_attributes(dp, interval_attributes);
                continue;
            }
            m.set_attr(dp, keys::start_ns, iv.start);
            m.set_attr(dp, keys::end_ns, iv.end);
            set_cause(dp, *iv.change);
            interval_attributes = m.share_attributes(dp);
        }
    }
}

// What set an interval's mask: the event, and for an affinity call who made
// it, through which call and from which module.
void ProcessModelBuilder::set_cause(DataPathId dp, const MaskChange& c) {
    Model& m = model_;
    const RunModelKeys& k = keys_;
    const std::string_view event = event_schema::event_name(c.reason);
    if (!event.empty()) m.set(dp, k.set_by, event);
    if (c.reason != event_schema::EventKind::affinity) return;
    if (!c.api.empty()) m.set(dp, k.set_by_api, c.api);
    if (c.caller_tid > 0) m.set(dp, k.set_by_tid, c.caller_tid);
    if (!c.caller_module.empty()) m.set(dp, k.set_by_module, c.caller_module);
}

// Where the flow was seen running: its CPU at start and at end.
void ProcessModelBuilder::add_ran_on(ComponentId flow, int first_cpu, int last_cpu) {
    Model& m = model_;
    if (last_cpu >= 0) m.set(flow, keys_.last_cpu, static_cast<std::int64_t>(last_cpu));
    auto add = [&](int cpu, std::int64_t count) {
        const auto c = static_cast<std::size_t>(cpu);
        if (cpu < 0 || c >= pu_by_cpu_.size() || pu_by_cpu_[c] == kNoComponent) return;
        const DataPathId dp = m.add_datapath(flow, pu_by_cpu_[c], DataPathType::RanOn);
        m.set_attr(dp, keys::count, count);
    };
    if (first_cpu == last_cpu) {
        add(first_cpu, 2);
    } else {
        add(first_cpu, 1);
        add(last_cpu, 1);
    }
}

void ProcessModelBuilder::add_unseen_flow(ComponentId process, const ProcessImage& first, const ThreadRecord& main,
                                          std::int64_t unseen) {
    ThreadRecord t;
    t.tid = 0;
    t.name = "threads that ended unseen";
    t.start_t = first.start_t;
    t.end_t = main.end_t;
    t.utime_us = unseen;
    t.stime_us = 0;
    t.masks = main.masks;
    const ComponentId f = add_flow(process, t, to_string(FlowKind::Unseen));
    add_may_run_on(f, intervals_of<Interval>(t.masks, t.start_t, t.end_t));
}

// The waits each thread was seen making, as WaitedFor paths to the flow
// waited for: found by tid, else by the pthread handle of the latest thread
// that started with it before the wait (glibc reuses handles).
void ProcessModelBuilder::add_waits(ComponentId process,
                                    const std::vector<std::pair<const ThreadRecord*, ComponentId>>& waiters,
                                    const std::vector<ProcessImage>& images,
                                    const std::unordered_map<std::int64_t, ComponentId>& flow_of_tid) {
    Model& m = model_;
    const DataPathType type = *keys_.waited_for;
    // Threads by handle, built on the first wait that needs it.
    std::unordered_map<std::string_view, std::vector<const ThreadRecord*>> by_handle;
    auto target_of = [&](const WaitRecord& w) -> ComponentId {
        if (w.target_tid > 0)
            if (auto it = flow_of_tid.find(w.target_tid); it != flow_of_tid.end()) return it->second;
        if (w.target_pthread.empty()) return process;
        if (by_handle.empty())
            for (const ProcessImage& im : images)
                for (const ThreadRecord& t : im.threads)
                    if (!t.pthread_handle.empty()) by_handle[t.pthread_handle].push_back(&t);
        const ThreadRecord* best = nullptr;
        if (auto it = by_handle.find(w.target_pthread); it != by_handle.end())
            for (const ThreadRecord* t : it->second)
                if (t->start_t <= w.begin_t && (!best || t->start_t > best->start_t)) best = t;
        if (best)
            if (auto it = flow_of_tid.find(best->tid); it != flow_of_tid.end()) return it->second;
        return process;
    };
    for (const auto& [record, flow] : waiters)
        for (const WaitRecord& w : record->waits) {
            const DataPathId dp = m.add_datapath(flow, target_of(w), type);
            m.set_attr(dp, keys::start_ns, w.begin_t);
            m.set_attr(dp, keys::end_ns, w.end_t);
            if (w.cpu_ns >= 0) m.set(dp, keys_.wait_cpu_ns, w.cpu_ns);
        }
}

}  // namespace stacksage
