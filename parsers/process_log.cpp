#include "parsers/process_log.hpp"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>

namespace stacksage {

namespace {

namespace schema = event_schema;
using event_schema::EventKind;

std::string string_field(const JsonDocument& doc, std::string_view key) {
    return std::string(doc.get_string(key).value_or(std::string_view{}));
}

// The quota fields, named alike in process_start and process_end. Negative
// numbers (only an altered file has them) read as not recorded.
CpuQuotaReading quota_reading(const JsonDocument& doc) {
    namespace start = schema::process_start;
    auto number = [&](std::string_view key) {
        const std::int64_t v = doc.get_int(key).value_or(-1);
        return v < 0 ? -1 : v;
    };
    CpuQuotaReading r;
    r.quota_us = number(start::cpu_quota_us);
    r.period_us = number(start::cpu_period_us);
    r.periods = number(start::cpu_periods);
    r.throttled = number(start::cpu_throttled);
    r.throttled_ns = number(start::cpu_throttled_ns);
    return r;
}

class LogInterpreter {
public:
    explicit LogInterpreter(ProcessImage& image) : p_(image) {}
    // A node file's stream whose writer never recorded its end: every end the
    // recorder sees (exit, _exit, exec, a fatal signal, a stopped log)
    // records it, so its process was killed.
    void set_stream_end_unrecorded() { stream_end_unrecorded_ = true; }

    // Returns an error message when the log cannot be interpreted at all.
    std::string on_event(const EventLogEvent& ev) {
        if (ev.t > p_.last_event_t) p_.last_event_t = ev.t;
        if (!started_) {
            if (ev.kind != EventKind::process_start)
                return "the first event is '" + std::string(ev.name) + "', not " +
                       std::string(schema::process_start::event);
            start(ev);
            return {};
        }
        if (ev.pid != p_.pid) {
            // A vfork child writing through its parent's descriptor, or a
            // log reused across a pid change: not this process's events.
            ++foreign_events_;
            return {};
        }
        if (ev.truncated) return {};  // only the common fields survived; nothing to apply
        const JsonDocument& doc = *ev.doc;
        switch (ev.kind) {
            case EventKind::thread_start: on_thread_start(ev); break;
            case EventKind::thread_end: on_thread_end(ev); break;
            case EventKind::join: on_join(ev); break;
            case EventKind::live_warning:
                if (auto w = live_warning_from(ev)) p_.live_warnings.push_back(std::move(*w));
                break;
            case EventKind::thread_usage_at_exit: on_usage_at_exit(ev); break;
            case EventKind::affinity: on_affinity(ev); break;
            case EventKind::thread_name: {
                namespace naming = schema::thread_name;
                const auto target = doc.get_int(naming::target_tid);
                const auto name = doc.get_string(naming::name);
                if (target && name && *target > 0)
                    thread_or_discover(*target, ev.t).name = std::string(*name);
                else if (auto handle = doc.get_string(naming::target_pthread); handle && name)
                    pending_names_[std::string(*handle)] = std::string(*name);
                break;
            }
            case EventKind::mpi_init:
            case EventKind::mpi_finalize: {
                namespace snapshot = schema::mpi_snapshot;
                if (auto r = doc.get_int(snapshot::rank)) p_.mpi_rank = *r;
                if (ev.kind == EventKind::mpi_init) {
                    p_.mpi_init_t = ev.t;
                    if (auto r = doc.get_int(snapshot::rank); r && p_.rank < 0) p_.rank = *r;
                    if (auto s = doc.get_int(snapshot::size)) p_.mpi_size = *s;
                    if (auto l = doc.get_int(snapshot::thread_level)) p_.mpi_thread_level = *l;
                } else {
                    p_.mpi_finalize_t = ev.t;
                }
                on_snapshot(ev);
                break;
            }
            case EventKind::process_end: {
                namespace end = schema::process_end;
                if (string_field(doc, end::how) == "signal") {
                    // Written by the fatal-signal path after its signal
                    // event, which stays the image's end; the line only adds
                    // the figures. Without that event (lost), this one ends it.
                    if (!p_.end_known && fatal_signal_t_ < 0) {
                        fatal_signal_t_ = ev.t;
                        fatal_signal_number_ = doc.get_int(end::signal).value_or(-1);
                        const char* abbrev = fatal_signal_number_ > 0 && fatal_signal_number_ < 65
                                                 ? sigabbrev_np(static_cast<int>(fatal_signal_number_))
                                                 : nullptr;
                        fatal_signal_ = abbrev ? "SIG" + std::string(abbrev) : "#" + std::to_string(fatal_signal_number_);
                    }
                } else {
                    p_.end_t = ev.t;
                    p_.end_known = true;
                    p_.end_event = EventKind::process_end;
                    p_.end_how = string_field(doc, end::how);
                    if (auto s = doc.get_int(end::status)) p_.exit_status = *s;
                }
                p_.quota_at_end = quota_reading(doc);
                p_.utime_us = doc.get_int(end::utime_us).value_or(-1);
                p_.stime_us = doc.get_int(end::stime_us).value_or(-1);
                p_.nvcsw = doc.get_int(end::nvcsw).value_or(-1);
                p_.nivcsw = doc.get_int(end::nivcsw).value_or(-1);
                p_.main_run_delay_ns = doc.get_int(end::main_run_delay_ns).value_or(-1);
                p_.main_run_slices = doc.get_int(end::main_run_slices).value_or(-1);
                p_.main_cpu_us = doc.get_int(end::main_cpu_us).value_or(-1);
                if (auto u = doc.get_int(end::threads_untraced); u && *u > 0)
                    p_.threads_untraced = static_cast<std::uint64_t>(*u);
                p_.recorder_cpu_us = std::max<std::int64_t>(-1, doc.get_int(end::recorder_cpu_us).value_or(-1));
                break;
            }
            case EventKind::signal:
                if (doc.get_bool(schema::signal::fatal).value_or(false) && !p_.end_known) {
                    fatal_signal_t_ = ev.t;
                    fatal_signal_ = string_field(doc, schema::signal::name);
                    fatal_signal_number_ = doc.get_int(schema::signal::signal).value_or(-1);
                }
                break;
            case EventKind::log_stopped:
                if (log_stopped_t_ < 0) {
                    namespace stopped = schema::log_stopped;
                    log_stopped_t_ = ev.t;
                    p_.log_stop_error = string_field(doc, stopped::error);
                    log_stopped_how_ = string_field(doc, stopped::how);
                }
                break;
            case EventKind::exec:
                p_.exec_t = ev.t;
                exec_path_ = string_field(doc, schema::exec::path);
                exec_untraced_ = string_field(doc, schema::exec::untraced);
                break;
            case EventKind::exec_failed:
                p_.exec_t = -1;
                exec_untraced_.clear();
                break;
            case EventKind::topology:
                if (!doc.get_bool(schema::topology::ok).value_or(true))
                    p_.notes.push_back("the recorder could not write the node's topology: " +
                                       string_field(doc, schema::topology::error));
                break;
            // Said nothing the image needs: how the recorder fared.
            case EventKind::process_start:  // a second one: the first stands
            case EventKind::fork:
            case EventKind::fork_failed:
            case EventKind::thread_create_failed:
            case EventKind::model:
            case EventKind::samples:
            case EventKind::sampling:
            case EventKind::unknown: break;
        }
        return {};
    }

    void finish() {
        if (foreign_events_ > 0)
            p_.notes.push_back(std::to_string(foreign_events_) +
                               " event(s) carry another pid and were ignored");
        // The next image will leave no log: say which, and why.
        if (p_.exec_t >= 0 && !exec_untraced_.empty())
            p_.notes.push_back("pid " + std::to_string(p_.pid) + " exec'ed " + exec_path_ +
                               ", which ran untraced (" + exec_untraced_ + "): what it did is not recorded");
        // The image's end, by order of preference.
        if (!p_.end_known) {
            if (fatal_signal_t_ >= 0) {
                p_.end_t = fatal_signal_t_;
                p_.end_how = "signal " + fatal_signal_;
                p_.end_known = true;
                p_.end_event = EventKind::signal;
                p_.end_signal = fatal_signal_number_;
            } else if (p_.exec_t >= 0) {
                p_.end_t = p_.exec_t;
                p_.end_how = "exec";
                p_.end_known = true;
                p_.end_event = EventKind::exec;
            } else if (log_stopped_t_ >= 0) {
                // Written at the process's end in place of its process_end.
                p_.end_t = log_stopped_t_;
                p_.end_how = log_stopped_how_.empty() ? "unknown" : log_stopped_how_;
            } else {
                p_.end_t = p_.last_event_t;
                p_.end_how = "unknown";
            }
        }
        // A log that stopped recording lost what followed, whatever ended it.
        if (log_stopped_t_ >= 0) p_.log_ends_early = "log-stopped";
        else if (!p_.end_known)
            p_.log_ends_early = p_.summary.unfinished_tail || stream_end_unrecorded_ ? "killed" : "unknown";
        // The recorder's own threads, listed in snapshots by older recorders.
        const auto recorder_threads = std::remove_if(p_.threads.begin(), p_.threads.end(), [](const ThreadRecord& t) {
            return t.discovered && !t.is_main && is_recorder_thread_name(t.name);
        });
        p_.threads.erase(recorder_threads, p_.threads.end());
        by_tid_.clear();  // indexes into threads; not used after this
        for (ThreadRecord& t : p_.threads) {
            // Lines of different threads are in write order, not time order.
            std::stable_sort(t.masks.begin(), t.masks.end(),
                             [](const MaskChange& a, const MaskChange& b) { return a.t < b.t; });
            // Consecutive equal masks are one interval.
            t.masks.erase(std::unique(t.masks.begin(), t.masks.end(),
                                      [](const MaskChange& a, const MaskChange& b) { return a.cpuset == b.cpuset; }),
                          t.masks.end());
            // A thread without its own end lived until the image ended.
            if (t.end_t < 0) t.end_t = std::max(p_.end_t, t.start_t);
            // A change after the end cannot have mattered; the starting mask stays.
            std::size_t keep = t.masks.empty() ? 0 : 1;
            while (keep < t.masks.size() && t.masks[keep].t <= t.end_t) ++keep;
            t.masks.resize(keep);
            // Waits stay as recorded: the run view orders them and clips them
            // to the thread's life, once, for every model it reads.
        }
    }

private:
    // A cpuset field ("cpuset", "cgroup_cpuset", ...): nullopt when absent or
    // null. One that is no cpuset (junk, or CPU numbers of 2^20 and more,
    // which Cpuset refuses) is counted and ignored; CPUs of kMaxCpuInLog and
    // more are counted and dropped (a mask left empty then is ignored): no
    // Linux machine has them, and the node rebuilt from the masks seen, and
    // every flow's MayRunOn paths, grow with the highest CPU named.
    // Uncounted: for a field the analysis does not use (a thread's end
    // mask), whose problems it does not report.
    enum class Problems { counted, uncounted };
    std::optional<Cpuset> mask_field(const JsonDocument& doc, JsonDocument::ValueIndex object, std::string_view key,
                                     Problems problems = Problems::counted) {
        const bool count = problems == Problems::counted;
        const JsonDocument::ValueIndex value = doc.find(object, key);
        const auto text = doc.as_string(value);
        if (!text) {
            if (count && value != JsonDocument::kNone && !doc.is_null(value)) ++p_.masks_unreadable;
            return std::nullopt;
        }
        std::optional<Cpuset> mask = Cpuset::parse(*text);
        if (!mask) {
            if (count) ++p_.masks_unreadable;
            return std::nullopt;
        }
        if (mask->end_index() > kMaxCpuInLog) {
            if (count) {
                ++p_.masks_clipped;
                p_.highest_clipped_cpu = std::max<std::int64_t>(p_.highest_clipped_cpu, mask->end_index() - 1);
            }
            *mask &= Cpuset::range(0, kMaxCpuInLog - 1);
            if (mask->empty()) return std::nullopt;
        }
        return mask;
    }

    void start(const EventLogEvent& ev) {
        namespace start = schema::process_start;
        started_ = true;
        const JsonDocument& doc = *ev.doc;
        p_.pid = ev.pid;
        p_.start_t = ev.t;
        p_.origin = string_field(doc, start::origin);
        p_.ppid = doc.get_int(start::ppid).value_or(-1);
        p_.host = string_field(doc, start::host);
        p_.rank = doc.get_int(start::rank).value_or(-1);
        p_.environment_rank = p_.rank;
        p_.launcher = string_field(doc, start::launcher);
        p_.exe = string_field(doc, start::exe);
        const auto cmd = doc.find(doc.root(), start::cmdline);
        for (auto a = doc.first_child(cmd); a != JsonDocument::kNone; a = doc.next(a))
            if (auto s = doc.as_string(a)) p_.cmdline.emplace_back(*s);
        p_.cgroup_cpuset = mask_field(doc, doc.root(), start::cgroup_cpuset);
        p_.online_cpus = mask_field(doc, doc.root(), start::online_cpus);
        p_.quota_at_start = quota_reading(doc);
        p_.cpu_quota_cgroup = string_field(doc, start::cpu_quota_cgroup);
        for (auto [object, out] : {std::pair{start::env, &p_.env}, std::pair{start::identity, &p_.identity}}) {
            const auto o = doc.find(doc.root(), object);
            for (auto m = doc.first_child(o); m != JsonDocument::kNone; m = doc.next(m))
                if (auto s = doc.as_string(m)) out->emplace_back(std::string(doc.key(m)), std::string(*s));
        }
        ThreadRecord& main = new_thread(ev.tid, ev.t, false);
        main.is_main = true;
        if (ev.truncated) {
            p_.notes.push_back("process_start was too long for the recorder and lost its fields");
            return;
        }
        if (auto m = mask_field(doc, doc.root(), start::cpuset)) main.masks.push_back(change(ev, std::move(*m)));
        if (auto cpu = doc.get_int(start::cpu); cpu && *cpu >= 0) main.first_cpu = static_cast<int>(*cpu);
    }

    // A mask that ev set.
    MaskChange change(const EventLogEvent& ev, Cpuset mask) {
        MaskChange c;
        c.t = ev.t;
        c.cpuset = std::move(mask);
        c.reason = ev.kind;
        return c;
    }

    void on_thread_start(const EventLogEvent& ev) {
        namespace start = schema::thread_start;
        const JsonDocument& doc = *ev.doc;
        if (!take_tid(ev.tid, ev.t)) return;
        ThreadRecord& t = new_thread(ev.tid, ev.t, false);
        t.seq = doc.get_int(start::seq).value_or(-1);
        t.creator_tid = doc.get_int(start::creator_tid).value_or(-1);
        t.creator_module = intern_module(doc.get_string(start::creator_module));
        t.start_module = intern_module(doc.get_string(start::start_module));
        t.attr_cpuset = mask_field(doc, doc.root(), start::attr_cpuset);
        if (auto m = mask_field(doc, doc.root(), start::cpuset)) t.masks.push_back(change(ev, std::move(*m)));
        if (auto cpu = doc.get_int(start::cpu); cpu && *cpu >= 0) t.first_cpu = static_cast<int>(*cpu);
        t.pthread_handle = string_field(doc, start::pthread);
        t.create_t = doc.get_int(start::create_t).value_or(-1);
        t.creator_cpu_ns = doc.get_int(start::creator_cpu_ns).value_or(-1);
        // A name given before the thread started waits under its pthread handle.
        if (auto handle = doc.get_string(start::pthread))
            if (auto it = pending_names_.find(std::string(*handle)); it != pending_names_.end()) {
                t.name = std::move(it->second);
                pending_names_.erase(it);
            }
        // A thread that ended within 1 ms of its start: this line is its end
        // too, as a short-lived thread_end would have said it.
        if (const auto end_t = doc.get_int(start::end_t); end_t && *end_t >= ev.t) {
            t.end_t = *end_t;
            t.ended_itself = true;
            t.short_lived = true;
            t.end_how = string_field(doc, start::how);
            if (auto cpu = doc.get_int(start::end_cpu); cpu && *cpu >= 0) t.last_cpu = static_cast<int>(*cpu);
        }
    }

    void on_thread_end(const EventLogEvent& ev) {
        namespace end = schema::thread_end;
        const JsonDocument& doc = *ev.doc;
        ThreadRecord& t = thread_or_discover(ev.tid, ev.t);
        t.end_t = ev.t;
        t.ended_itself = true;
        t.end_how = string_field(doc, end::how);
        t.short_lived = doc.get_bool(end::short_lived).value_or(false);
        // A short thread's end has no CPU time: one read at the
        // process's exit, when it came first, stays.
        if (!(t.short_lived && t.cpu_time_at_exit)) {
            t.utime_us = doc.get_int(end::utime_us).value_or(-1);
            t.stime_us = doc.get_int(end::stime_us).value_or(-1);
            t.run_delay_ns = doc.get_int(end::run_delay_ns).value_or(-1);
            t.run_slices = doc.get_int(end::run_slices).value_or(-1);
            t.cpu_time_at_exit = false;
        }
        t.nvcsw = doc.get_int(end::nvcsw).value_or(-1);
        t.nivcsw = doc.get_int(end::nivcsw).value_or(-1);
        if (auto cpu = doc.get_int(end::cpu); cpu && *cpu >= 0) t.last_cpu = static_cast<int>(*cpu);
        if (auto m = mask_field(doc, doc.root(), end::cpuset, Problems::uncounted)) {
            t.end_mask = change(ev, std::move(*m));
            note_mask_changed_unseen(t);
        }
    }

    // The cross-check: a mask read again at the thread's end that is not the
    // last one recorded was changed by a path the recorder does not
    // intercept. When is unknown, so it is counted, not put in the timeline.
    void note_mask_changed_unseen(const ThreadRecord& t) {
        if (t.masks.empty() || t.masks.back().cpuset == t.end_mask->cpuset) return;
        if (p_.masks_changed_unseen++ == 0)
            p_.mask_changed_unseen_example = "thread " + std::to_string(t.tid) + ": " +
                                             t.masks.back().cpuset.to_list_string() + " recorded last, " +
                                             t.end_mask->cpuset.to_list_string() + " at its end";
    }

    std::string_view intern_module(std::optional<std::string_view> path) {
        if (!path || path->empty()) return {};
        for (const std::string& m : *p_.module_pool)
            if (m == *path) return m;
        return p_.module_pool->emplace_back(*path);
    }

    // Whether a thread_start may open a thread with this tid at time t. The
    // kernel gives a tid to one live thread at a time, so a tid that a thread
    // started under our eyes still holds means its thread_end is missing (a
    // torn line) or the file was altered: the earlier thread is taken to end
    // here. A start that carries the main thread's tid (which lives as long
    // as the process), or comes before the earlier start, is ignored.
    bool take_tid(std::int64_t tid, std::int64_t t) {
        auto it = by_tid_.find(tid);
        if (it == by_tid_.end()) return true;
        ThreadRecord& earlier = p_.threads[it->second];
        if (earlier.end_t >= 0 && earlier.end_t <= t) return true;  // ended before: the kernel reused the tid
        if (earlier.discovered) return true;  // seen before its start line was: kept as before
        if (earlier.is_main || t < earlier.start_t) {
            ++p_.duplicate_tid_starts_ignored;
            return false;
        }
        earlier.end_t = t;
        ++p_.duplicate_tid_starts;
        return true;
    }

    ThreadRecord& new_thread(std::int64_t tid, std::int64_t t, bool discovered) {
        p_.threads.emplace_back();
        ThreadRecord& r = p_.threads.back();
        r.tid = tid;
        r.start_t = t;
        r.discovered = discovered;
        by_tid_[tid] = p_.threads.size() - 1;
        return r;
    }

    // The live thread with this tid, or a new "discovered" one (created
    // before the recorder was ready, or by a path it does not see).
    ThreadRecord& thread_or_discover(std::int64_t tid, std::int64_t t) {
        if (auto it = by_tid_.find(tid); it != by_tid_.end()) {
            ThreadRecord& r = p_.threads[it->second];
            if (r.end_t < 0 || r.end_t >= t) return r;
        }
        return new_thread(tid, t, true);
    }

    // A thread still alive when the process exited, measured by the exiting
    // thread. Its own thread_end, when it ended meanwhile and wrote one, is
    // the better record and wins in either order.
    void on_usage_at_exit(const EventLogEvent& ev) {
        namespace usage = schema::thread_usage_at_exit;
        const JsonDocument& doc = *ev.doc;
        const auto target = doc.get_int(usage::target_tid);
        const auto cpu_us = doc.get_int(usage::cpu_us);
        if (!target || *target <= 0 || !cpu_us || *cpu_us < 0) return;
        ThreadRecord* t = nullptr;
        if (auto it = by_tid_.find(*target); it != by_tid_.end()) t = &p_.threads[it->second];
        if (t != nullptr && !t->end_how.empty()) return;
        if (t == nullptr) t = &new_thread(*target, ev.t, true);
        t->utime_us = *cpu_us;
        t->stime_us = 0;
        t->run_delay_ns = doc.get_int(usage::run_delay_ns).value_or(-1);
        t->run_slices = doc.get_int(usage::run_slices).value_or(-1);
        t->cpu_time_at_exit = true;
        if (doc.get_bool(usage::untraced).value_or(false)) {
            t->untraced = true;
            // It started before the recorder heard of it: when, the kernel said.
            if (const auto lived = doc.get_int(usage::duration_ns); lived && *lived > 0 && t->discovered)
                t->start_t = std::max(p_.start_t, ev.t - std::min(*lived, ev.t));
            if (auto name = doc.get_string(usage::name); name && t->name.empty()) t->name = std::string(*name);
            if (auto m = mask_field(doc, doc.root(), usage::cpuset); m && t->masks.empty())
                t->masks.push_back(change(ev, std::move(*m)));
        }
    }

    // A wait of the writing thread (pthread_join): kept when its bounds make
    // sense; one a file edited into nonsense (end before begin) is dropped.
    void on_join(const EventLogEvent& ev) {
        namespace join = schema::join;
        const JsonDocument& doc = *ev.doc;
        const auto begin = doc.get_int(join::begin_t);
        if (!begin || *begin < 0 || *begin > ev.t) return;
        WaitRecord w;
        w.begin_t = *begin;
        w.end_t = ev.t;
        w.cpu_ns = doc.get_int(join::cpu_ns).value_or(-1);
        w.target_tid = doc.get_int(join::target_tid).value_or(-1);
        w.target_pthread = string_field(doc, join::target_pthread);
        thread_or_discover(ev.tid, *begin).waits.push_back(std::move(w));
    }

    void set_mask(ThreadRecord& t, const EventLogEvent& ev, Cpuset mask) {
        if (!t.masks.empty() && t.masks.back().cpuset == mask) return;
        t.masks.push_back(change(ev, std::move(mask)));
    }

    void on_affinity(const EventLogEvent& ev) {
        namespace affinity = schema::affinity;
        const JsonDocument& doc = *ev.doc;
        if (doc.get_int(affinity::rc).value_or(-1) != 0) return;
        const auto target = doc.get_int(affinity::target_tid);
        if (!target || *target <= 0) return;
        const bool in_process =
            doc.get_bool(affinity::target_in_process).value_or(false) || by_tid_.count(*target) > 0;
        if (!in_process) return;  // another process's placement: that process records its own mask
        auto mask = mask_field(doc, doc.root(), affinity::cpuset);
        if (!mask) return;
        ThreadRecord& t = thread_or_discover(*target, ev.t);
        if (!t.masks.empty() && t.masks.back().cpuset == *mask) return;
        MaskChange c = change(ev, std::move(*mask));
        c.api = intern_module(doc.get_string(affinity::api));
        c.caller_tid = ev.tid;
        c.caller_module = intern_module(doc.get_string(affinity::caller_module));
        t.masks.push_back(std::move(c));
    }

    // MPI's snapshots list every thread of the process with its mask: a mask
    // that differs from ours was changed by a path we do not intercept.
    void on_snapshot(const EventLogEvent& ev) {
        namespace thread = schema::mpi_snapshot::thread;
        const JsonDocument& doc = *ev.doc;
        const auto threads = doc.find(doc.root(), schema::mpi_snapshot::threads);
        for (auto th = doc.first_child(threads); th != JsonDocument::kNone; th = doc.next(th)) {
            const auto tid = doc.as_int(doc.find(th, thread::tid));
            if (!tid) continue;
            if (*tid <= 0) {
                ++p_.invalid_tids;  // the recorder lists the kernel's tasks: every tid is positive
                continue;
            }
            ThreadRecord& r = thread_or_discover(*tid, ev.t);
            if (r.name.empty())
                if (auto name = doc.as_string(doc.find(th, thread::name))) r.name = std::string(*name);
            if (auto mask = mask_field(doc, th, thread::cpuset)) set_mask(r, ev, std::move(*mask));
        }
    }

    ProcessImage& p_;
    bool started_ = false;
    std::unordered_map<std::int64_t, std::size_t> by_tid_;
    std::unordered_map<std::string, std::string> pending_names_;  // pthread handle -> name
    std::size_t foreign_events_ = 0;
    std::int64_t fatal_signal_t_ = -1;
    std::string fatal_signal_;
    std::int64_t fatal_signal_number_ = -1;
    std::int64_t log_stopped_t_ = -1;
    std::string log_stopped_how_;
    std::string exec_path_;      // the last exec's path
    std::string exec_untraced_;  // why its image runs untraced; "" when it is recorded
    bool stream_end_unrecorded_ = false;
};

Result<ProcessImage> interpret(const std::string& name,
                               const std::function<Result<EventLogSummary>(
                                   const std::function<void(const EventLogEvent&)>&)>& read,
                               std::optional<bool> stream_ended = std::nullopt) {
    ProcessImage image;
    image.file = name;
    LogInterpreter interpreter(image);
    if (stream_ended.has_value() && !*stream_ended) interpreter.set_stream_end_unrecorded();
    std::string problem;
    std::size_t problem_line = 0;
    Result<EventLogSummary> summary = read([&](const EventLogEvent& ev) {
        if (!problem.empty()) return;
        problem = interpreter.on_event(ev);
        if (!problem.empty()) problem_line = ev.line;
    });
    if (!summary) return summary.error();
    if (!problem.empty())
        return make_error(name + ": corrupt event log, line " + std::to_string(problem_line) + ": " +
                          problem + "; the file is skipped");
    if (image.pid < 0)
        return make_error(name + ": the event log holds no complete event" +
                          std::string(summary->torn_last_line || summary->torn_lines > 0 ? " (only torn lines)" : "") +
                          "; the file is skipped");
    image.summary = std::move(*summary);
    interpreter.finish();
    return image;
}

}  // namespace

bool is_recorder_thread_name(std::string_view name) { return name.starts_with("stacksage"); }

Result<ProcessImage> parse_process_log(std::string_view text, const std::string& name,
                                       std::optional<bool> stream_ended) {
    return interpret(
        name,
        [&](const std::function<void(const EventLogEvent&)>& on_event) { return parse_event_log(text, name, on_event); },
        stream_ended);
}

Result<ProcessImage> read_process_log(const std::string& path) {
    return interpret(path, [&](const std::function<void(const EventLogEvent&)>& on_event) {
        return read_event_log(path, on_event);
    });
}

}  // namespace stacksage
