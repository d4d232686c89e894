// Loading a run: directory scan and run.json (run_directory.hpp), per host:
// its event logs (parsed in parallel), its topology (topology_resolver.hpp),
// then its processes and flows added to the merged model. Hosts are handled
// one at a time so that memory holds one host's parsed logs, not the whole
// run's.
#include "parsers/run_loader.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <filesystem>
#include <thread>
#include <unordered_map>

#include "parsers/hwloc_loader.hpp"
#include "parsers/image_notes.hpp"
#include "parsers/input_file.hpp"
#include "parsers/memory_access_paths.hpp"
#include "parsers/node_file_reader.hpp"
#include "parsers/sample_summary.hpp"
#include "core/run_model_schema.hpp"
#include "core/saturating.hpp"
#include "parsers/live_warning.hpp"
#include "parsers/process_log.hpp"
#include "parsers/run_directory.hpp"
#include "parsers/topology_resolver.hpp"

namespace stacksage {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string join_command(const std::vector<std::string>& args) {
    std::string out;
    for (const std::string& a : args) {
        if (!out.empty()) out += ' ';
        const bool quote = a.empty() || a.find_first_of(" \t\"'$") != std::string::npos;
        if (quote) {
            out += '\'';
            for (char c : a) {
                if (c == '\'') out += "'\\''";
                else out += c;
            }
            out += '\'';
        } else {
            out += a;
        }
    }
    return out;
}

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

// One process's logs (images before and after exec share the pid), parsed.
struct LogGroup : ProcessLogs {
    std::vector<ProcessImage> images;     // parsed, in start order
};

// A host as scanned, its processes' logs moved into groups; then, once a
// parse thread read it, its images and what to note about them.
struct HostDir : ScannedHost {
    std::vector<LogGroup> groups;
    std::vector<LoadNote> notes;       // from parsing, in file order
    std::size_t logs_skipped = 0;
    std::size_t events = 0;
    std::size_t streams = 0;           // node-file streams read
    std::vector<NodeFile> sample_files_read;  // node.samples, kept for add_samples
    std::unordered_map<std::uint64_t, const NodeStream*> samples_of_stream;
    explicit HostDir(ScannedHost scanned) : ScannedHost(std::move(scanned)) {
        groups.reserve(processes.size());
        for (ProcessLogs& logs : processes) groups.push_back({std::move(logs), {}});
        processes.clear();
    }
};

class RunLoader {
public:
    RunLoader(std::string out, const RunLoadOptions& options) : out_(std::move(out)), options_(options) {}

    Result<LoadedRun> load() {
        run_.directory = out_;
        if (auto scanned = scan(); !scanned) return scanned.error();
        run_.topology = run_.model.add_component(ComponentType::Topology, kNoComponent, "run",
                                                 base_name(fs::path(out_).lexically_normal().string()));
        read_run_json();
        keys_ = &run_.model.intern_run_keys();
        resolver_.emplace(run_.model, run_.topology, run_.notes);
        run_.stats.hosts = hosts_.size();
        reserve_model();
        load_hosts();
        run_.stats.topologies_loaded = resolver_->topologies_loaded();
        run_.stats.snapshots_mapped = resolver_->snapshots_mapped();
        std::sort(run_.notes.begin(), run_.notes.end(), [](const LoadNote& a, const LoadNote& b) {
            return a.level != b.level ? a.level > b.level : natural_less(a.file, b.file);
        });
        return std::move(run_);
    }

private:
    void note(LoadNote::Level level, std::string file, std::string message) {
        run_.notes.push_back({level, std::move(file), std::move(message)});
    }

    // The hosts and their logs (run_directory.hpp); a host directory that
    // cannot be read is noted.
    Status scan() {
        Result<RunDirectoryScan> scanned = scan_run_directory(out_);
        if (!scanned) return scanned.error();
        for (const RunDirectoryScan::UnreadableHost& host : scanned->unreadable_hosts)
            note(LoadNote::Level::Error, host.name, "the host directory cannot be read (" + host.error +
                                                        "); its processes are missing from the analysis");
        run_.stats.logs = scanned->logs;
        log_bytes_ = scanned->log_bytes;
        hosts_.reserve(scanned->hosts.size());
        for (ScannedHost& host : scanned->hosts) hosts_.emplace_back(std::move(host));
        return Ok{};
    }

    void read_run_json() {
        const RunRecordRead read = read_run_record(out_);
        switch (read.problem) {
            case RunRecordRead::Problem::None: break;
            case RunRecordRead::Problem::Missing:
                note(LoadNote::Level::Warning, "run.json",
                     "run.json is missing: the command and start time of the run are unknown; the event logs are "
                     "analysed without them");
                return;
            case RunRecordRead::Problem::Unreadable:
                note(LoadNote::Level::Error, "run.json",
                     "run.json cannot be read: " + read.reason +
                         "; it is ignored and the event logs are analysed without it");
                return;
            case RunRecordRead::Problem::NotAnObject:
                note(LoadNote::Level::Error, "run.json",
                     "run.json is not a JSON object (corrupt or truncated); it is ignored and the event logs are "
                     "analysed without it");
                return;
        }
        const RunRecordFields& f = read.fields;
        Model& m = run_.model;
        const ComponentId root = run_.topology;
        if (f.command) m.set_attr(root, m.key(run_keys::run_command), std::string_view(join_command(*f.command)));
        if (f.start_iso8601) m.set_attr(root, m.key(run_keys::run_start), std::string_view(*f.start_iso8601));
        if (f.tool_version) m.set_attr(root, m.key(run_keys::run_tool_version), std::string_view(*f.tool_version));
        if (f.job_id) m.set_attr(root, m.key(run_keys::run_job_id), std::string_view(*f.job_id));
        if (f.launch) {
            if (f.launch->processes > 0)
                m.set_attr(root, m.key(run_keys::run_launch_ranks), static_cast<std::int64_t>(f.launch->processes));
            // Hosts the command named; an allocation's hosts (hosts_from
            // SLURM_JOB_NODELIST, PBS_NODEFILE) are not all promised ranks.
            std::string hosts;
            if (f.launch->hosts_from == "command")
                for (const std::string& h : f.launch->hosts)
                    if (!h.empty() && h.find(',') == std::string::npos) hosts += (hosts.empty() ? "" : ",") + h;
            if (!hosts.empty()) m.set_attr(root, m.key(run_keys::run_launch_hosts), std::string_view(hosts));
        }
        for (const std::string& u : f.unrecordable)
            note(LoadNote::Level::Error, "run.json", u + "; it ran untraced and is missing from the analysis");
        if (f.version && *f.version > 1)
            note(LoadNote::Level::Info, "run.json",
                 "run.json has version " + std::to_string(*f.version) +
                     " (newer than this stacksage); only the fields it knows are read");
    }

    // Sizes the model's arrays once for the whole run, from the logs' total
    // size: growing them by doubling would copy hundreds of MB several times.
    // The estimate errs high (about one flow per 200 bytes of log, where a
    // thread's start and end take about 500): reserved memory that is never
    // written is never made resident.
    // The estimate stops at 8 GiB of logs: a directory of sparse files that
    // claim terabytes (each under its limit) must not reserve beyond what
    // a machine has; a real run that large grows its arrays as it loads.
    void reserve_model() {
        constexpr std::uintmax_t kMaxReservedLogBytes = 8 * input_limits::kGiB;
        const std::size_t flows = static_cast<std::size_t>(std::min(log_bytes_, kMaxReservedLogBytes) / 200) + 64;
        // A node file holds many processes: about one per 4 KB of log at least.
        const std::size_t processes = std::max<std::size_t>(run_.stats.logs, static_cast<std::size_t>(std::min(log_bytes_, kMaxReservedLogBytes) / 4000));
        const std::size_t node_components = hosts_.size() * 256;
        run_.model.reserve(flows + processes + node_components, flows * 3, flows * 14 + processes * 24 + node_components * 8);
    }

    // ---- one host ------------------------------------------------------------

    // Hosts are parsed on every core, a few ahead of the one being added to
    // the model (which is one thread's work: the model is not shared), so
    // that memory holds a window of parsed hosts, not the whole run's.
    void load_hosts() {
        const Clock::time_point start = Clock::now();
        unsigned n = options_.parse_threads ? options_.parse_threads : std::max(1u, std::thread::hardware_concurrency());
        n = static_cast<unsigned>(std::min<std::size_t>(n, std::max<std::size_t>(hosts_.size(), 1)));
        const std::size_t window = 4 * static_cast<std::size_t>(n) + 4;
        std::mutex mu;
        std::condition_variable cv;
        std::vector<char> parsed(hosts_.size(), 0);
        std::size_t next = 0, added = 0;
        auto work = [&] {
            for (;;) {
                std::size_t i;
                {
                    std::unique_lock lock(mu);
                    cv.wait(lock, [&] { return next >= hosts_.size() || next < added + window; });
                    if (next >= hosts_.size()) return;
                    i = next++;
                }
                parse_host(hosts_[i]);
                {
                    std::lock_guard lock(mu);
                    parsed[i] = 1;
                }
                cv.notify_all();
            }
        };
        std::vector<std::thread> workers;
        for (unsigned i = 0; i < n; ++i) workers.emplace_back(work);
        for (std::size_t i = 0; i < hosts_.size(); ++i) {
            {
                std::unique_lock lock(mu);
                cv.wait(lock, [&] { return parsed[i] != 0; });
            }
            commit_parsed(hosts_[i]);
            load_host(hosts_[i]);
            {
                std::lock_guard lock(mu);
                added = i + 1;
            }
            cv.notify_all();
        }
        for (auto& w : workers) w.join();
        // The stages overlap: parse is the time until the last host was
        // parsed less what building took meanwhile is not separable; the
        // whole load is reported as parse, less the model and topology stages.
        run_.stats.parse_seconds = std::max(0.0, seconds_since(start) - run_.stats.build_seconds - run_.stats.topology_seconds);
    }

    // One image read: its notes (into host.notes) and its place among its pid's.
    void take_image(HostDir& host, LogGroup& group, Result<ProcessImage> r, const std::string& file) {
        auto note_here = [&](LoadNote::Level level, std::string message) {
            host.notes.push_back({level, file, std::move(message)});
        };
        if (!r) {
            ++host.logs_skipped;
            std::string message = r.error().message;
            // Messages start with the absolute path; the note names the file already.
            const std::string abs = (fs::path(out_) / file).string();
            if (message.starts_with(abs + ": ")) message.erase(0, abs.size() + 2);
            if (message.starts_with(file + ": ")) message.erase(0, file.size() + 2);
            note_here(LoadNote::Level::Error, message);
            return;
        }
        ProcessImage& image = r.value();
        image.file = file;
        host.events += image.summary.events;
        for (LoadNote& n : notes_of_image(image)) note_here(n.level, std::move(n.message));
        image.notes.clear();
        group.images.push_back(std::move(image));
    }

    // Reads a host's logs: its node files' streams (grouped by pid into its
    // processes) and the logs of the earlier layout. On a parse thread: it
    // touches nothing but the host.
    void parse_host(HostDir& host) {
        for (LogGroup& g : host.groups)
            for (const std::string& file : g.files)
                take_image(host, g, read_process_log((fs::path(out_) / file).string()), file);
        std::unordered_map<std::int64_t, std::size_t> group_of_pid;
        for (std::size_t i = 0; i < host.groups.size(); ++i)
            if (host.groups[i].pid >= 0) group_of_pid.emplace(host.groups[i].pid, i);
        for (const std::string& file : host.node_event_files) {
            Result<NodeFile> read = read_node_file((fs::path(out_) / file).string(), file, formats::node_file::FileKind::events);
            if (!read) {
                ++host.logs_skipped;
                host.notes.push_back({LoadNote::Level::Error, file, read.error().message.substr(file.size() + 2)});
                continue;
            }
            if (read->damaged_regions > 0)
                host.notes.push_back({LoadNote::Level::Info, file,
                                      std::to_string(read->damaged_regions) +
                                          " region(s) with no readable header were stepped over (a process was "
                                          "killed as it reserved one, or could not grow into it: a full disk, a "
                                          "file-size limit; or the file was damaged)"});
            for (const NodeStream& s : read->streams) {
                ++host.streams;
                const std::string label = node_stream_label(file, s.stream);
                if (s.missing_regions > 0)
                    host.notes.push_back({LoadNote::Level::Warning, label,
                                          std::to_string(s.missing_regions) +
                                              " region(s) of this stream are missing (damaged); the lines cut "
                                              "there are skipped"});
                auto [it, added] = group_of_pid.emplace(s.pid, host.groups.size());
                if (added) {
                    LogGroup g;
                    g.pid = s.pid;
                    g.rank = s.rank;
                    host.groups.push_back(std::move(g));
                }
                LogGroup& g = host.groups[it->second];
                if (s.rank >= 0) g.rank = s.rank;
                g.files.push_back(label);
                Result<ProcessImage> image = parse_process_log(s.text, label, s.ended);
                if (image) image->stream = s.stream;
                take_image(host, g, std::move(image), label);
            }
        }
        if (!host.node_event_files.empty())
            std::sort(host.groups.begin(), host.groups.end(), [](const LogGroup& a, const LogGroup& b) {
                const bool ra = a.rank >= 0, rb = b.rank >= 0;
                if (ra != rb) return ra;  // ranks first, in rank order; then the others by pid
                return ra ? (a.rank != b.rank ? a.rank < b.rank : a.pid < b.pid) : a.pid < b.pid;
            });
        for (const std::string& file : host.node_sample_files) {
            Result<NodeFile> read = read_node_file((fs::path(out_) / file).string(), file, formats::node_file::FileKind::samples);
            if (!read) {
                host.notes.push_back({LoadNote::Level::Error, file, read.error().message.substr(file.size() + 2) +
                                                                        "; its samples are left out"});
                continue;
            }
            host.sample_files_read.push_back(std::move(*read));
        }
        for (const NodeFile& f : host.sample_files_read)
            for (const NodeStream& s : f.streams) host.samples_of_stream.emplace(s.of_stream, &s);
        for (LogGroup& g : host.groups) {
            // By start; logs that start together by their image number (the
            // recorder's first name before "pid-100.1.jsonl") or stream
            // number, then by name, so that which one is the duplicate does
            // not depend on the directory's order.
            std::sort(g.images.begin(), g.images.end(), [](const ProcessImage& a, const ProcessImage& b) {
                if (a.start_t != b.start_t) return a.start_t < b.start_t;
                if (a.stream != b.stream) return a.stream < b.stream;
                const std::int64_t ia = image_number(a.file), ib = image_number(b.file);
                return ia != ib ? ia < ib : natural_less(a.file, b.file);
            });
            drop_duplicate_images(g, host);
        }
    }

    // A parsed host's notes and counts, into the run's (on the loading thread).
    void commit_parsed(HostDir& host) {
        for (LoadNote& n : host.notes) run_.notes.push_back(std::move(n));
        host.notes.clear();
        host.notes.shrink_to_fit();
        run_.stats.logs_skipped += host.logs_skipped;
        run_.stats.events += host.events;
        run_.stats.streams += host.streams;
        // Logs: one per process image, whether a stream or a file.
        run_.stats.logs = run_.stats.logs + host.streams - host.node_event_files.size();
    }

    // The images of one pid follow each other (exec: one ends where the next
    // starts). Two that start at the same time, or one that starts before
    // the previous ended, cannot be one process's: a log copied or written
    // twice (the same pid twice). The first is kept; each later one is
    // skipped with an error naming the log it collides with.
    void drop_duplicate_images(LogGroup& g, HostDir& host) {
        if (g.images.size() < 2) return;
        std::vector<ProcessImage> kept;
        kept.reserve(g.images.size());
        for (ProcessImage& image : g.images) {
            if (!kept.empty()) {
                const ProcessImage& previous = kept.back();
                if (image.start_t == previous.start_t || image.start_t < previous.end_t) {
                    ++host.logs_skipped;
                    const std::int64_t pid = g.pid >= 0 ? g.pid : image.pid;
                    host.notes.push_back({LoadNote::Level::Error, image.file,
                         "another log of pid " + std::to_string(pid) + " on this host (" + previous.file +
                             ") covers the same time: one process cannot have two logs at once (a copied or "
                             "duplicated file?); this one is skipped"});
                    continue;
                }
            }
            kept.push_back(std::move(image));
        }
        g.images = std::move(kept);
    }

    void load_host(HostDir& host) {
        Clock::time_point start = Clock::now();
        ComponentId node = resolver_->graft(host);
        if (node == kNoComponent) {
            CpusetsSeen seen;
            for (const LogGroup& g : host.groups)
                for (const ProcessImage& image : g.images) seen.add(image);
            node = resolver_->rebuild_from_cpusets(host.name, seen);
        }
        Model& m = run_.model;
        pu_by_cpu_.clear();
        for (ComponentId pu : m.descendants_of_type(node, ComponentType::Thread)) {
            const std::int64_t os = m.os_index(pu);
            if (os < 0) continue;
            if (static_cast<std::size_t>(os) >= pu_by_cpu_.size()) pu_by_cpu_.resize(static_cast<std::size_t>(os) + 1, kNoComponent);
            pu_by_cpu_[static_cast<std::size_t>(os)] = pu;
        }
        missing_cpus_ = Cpuset{};
        run_.stats.topology_seconds += seconds_since(start);

        start = Clock::now();
        for (LogGroup& g : host.groups) {
            if (!g.images.empty()) add_process(host, node, g);
            g.images.clear();
            g.images.shrink_to_fit();
        }
        if (!missing_cpus_.empty())
            note(LoadNote::Level::Warning, host.name,
                 "masks on host " + host.name + " name CPUs [" + missing_cpus_.to_list_string() +
                     "] that its topology does not list as available (outside the job's cgroup when the topology "
                     "was written?); those CPUs are left out of the analysis");
        run_.stats.build_seconds += seconds_since(start);
    }

    // ---- processes and flows --------------------------------------------------

    struct Interval {
        std::int64_t start, end;
        const Cpuset* cpuset;
        const MaskChange* change;  // what set it
    };

    void add_may_run_on(ComponentId flow, const std::vector<Interval>& intervals) {
        Model& m = run_.model;
        for (const Interval& iv : intervals) {
            // The paths of one interval (one per CPU) carry the same
            // attributes: the first has them, the others share its list.
            Model::SharedAttributes interval_attributes;
            for (unsigned cpu : *iv.cpuset) {
                if (cpu >= pu_by_cpu_.size()) {
                    // Every CPU from here on is beyond the node: noted at
                    // once, not one at a time (a mask may name thousands).
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

    // What set an interval's mask: the event, and for an affinity call who
    // made it, through which call and from which module.
    void set_cause(DataPathId dp, const MaskChange& c) {
        Model& m = run_.model;
        const RunModelKeys& k = *keys_;
        const std::string_view event = event_schema::event_name(c.reason);
        if (!event.empty()) m.set(dp, k.set_by, event);
        if (c.reason != event_schema::EventKind::affinity) return;
        if (!c.api.empty()) m.set(dp, k.set_by_api, c.api);
        if (c.caller_tid > 0) m.set(dp, k.set_by_tid, c.caller_tid);
        if (!c.caller_module.empty()) m.set(dp, k.set_by_module, c.caller_module);
    }

    // Where the flow was seen running: its CPU at start and at end.
    void add_ran_on(ComponentId flow, int first_cpu, int last_cpu) {
        Model& m = run_.model;
        if (last_cpu >= 0) m.set(flow, keys_->last_cpu, static_cast<std::int64_t>(last_cpu));
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

    // Intervals [change, next change) of a mask history, closed at end.
    static std::vector<Interval> intervals_of(const std::vector<MaskChange>& masks, std::int64_t start,
                                              std::int64_t end) {
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

    ComponentId add_flow(ComponentId process, const ThreadRecord& t, std::string_view kind) {
        Model& m = run_.model;
        const RunModelKeys& k = *keys_;
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
        ++run_.stats.flows;
        return flow;
    }

    // The cgroups' CPU quota (as read last) and the throttling counters at
    // the process's start (its first image) and end (its last).
    void add_cpu_quota(ComponentId p, const ProcessImage& first, const ProcessImage& last) {
        Model& m = run_.model;
        const RunModelKeys& k = *keys_;
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

    void add_process(const HostDir& host, ComponentId node, LogGroup& g) {
        Model& m = run_.model;
        const RunModelKeys& k = *keys_;
        std::vector<ProcessImage>& images = g.images;
        const ProcessImage& first = images.front();
        const ProcessImage& last = images.back();
        const bool is_launcher = !last.launcher.empty();
        const ComponentId p = m.add_component(ComponentType::Process, kNoComponent,
                                              to_string(is_launcher ? ProcessKind::Launcher : ProcessKind::Process),
                                              base_name(last.exe), last.pid);
        ++run_.stats.processes;
        m.set_attr(p, keys::hostname, std::string_view(host.name));
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

        // The main thread runs through every image: its masks concatenate.
        ThreadRecord main;
        main.is_main = true;
        main.tid = last.pid;
        main.start_t = first.start_t;
        main.end_t = last.end_t;
        main.end_how = last.end_how;
        main.run_delay_ns = last.main_run_delay_ns;  // read for the main thread itself: nothing to derive
        main.run_slices = last.main_run_slices;
        OtherThreadsTotals others;
        for (ProcessImage& im : images) {
            for (ThreadRecord& t : im.threads) {
                if (!t.is_main) {
                    others.add(t);
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
        // The main thread's own CPU time, when the recorder read it. Else: the
        // process's CPU time and context switches cover all its threads, ended
        // ones included, and what the others do not account for is the main
        // thread's.
        bool derived = false;
        if (last.main_cpu_us >= 0) {
            main.utime_us = last.main_cpu_us;
            main.stime_us = 0;
        } else if (last.utime_us >= 0 && last.stime_us >= 0 && others.cpu_known) {
            main.utime_us = OtherThreadsTotals::left_of(add_saturating(last.utime_us, last.stime_us), others.cpu_us);
            main.stime_us = 0;
            derived = true;
        }
        if (last.nvcsw >= 0 && last.nivcsw >= 0 && others.switches_known) {
            main.nvcsw = OtherThreadsTotals::left_of(last.nvcsw, others.nvcsw);
            main.nivcsw = OtherThreadsTotals::left_of(last.nivcsw, others.nivcsw);
        }
        std::unordered_map<std::int64_t, ComponentId> flow_of_tid;
        const ComponentId main_flow = add_flow(p, main, to_string(FlowKind::Main));
        flow_of_tid[main.tid] = main_flow;
        if (derived) m.set(main_flow, k.cpu_time_derived, std::int64_t{1});
        add_may_run_on(main_flow, intervals_of(main.masks, main.start_t, main.end_t));
        add_ran_on(main_flow, main.first_cpu, main.last_cpu);

        // CPU time no recorded thread accounts for: the threads the log only
        // glimpsed (an affinity call, a snapshot) without figures share it;
        // where there are none, an Unseen flow holds it.
        const std::int64_t unseen = unseen_cpu_us(last, others);
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
                add_may_run_on(f, intervals_of(t.masks, t.start_t, t.end_t));
                add_ran_on(f, t.first_cpu, t.last_cpu);
                flow_of_tid[t.tid] = f;
                if (!t.waits.empty()) waiters.emplace_back(&t, f);
            }
        add_waits(p, waiters, images, flow_of_tid);
        add_samples(host, node, images, flow_of_tid);
    }

    // The CPU time of threads that ended before the recorder saw them
    // (glibc's own threads for SIGEV_THREAD timers and aio, raw clones): the
    // process's total less the main thread's, every other thread's and the
    // recorder's own, when all of those are known. Threads under a
    // millisecond have no figure of their own: each may hide up to 1 ms,
    // and so much is left to them. What remains, 20 ms and a tenth of the
    // total at least, is load the checks count: work no recorded thread did.
    static std::int64_t unseen_cpu_us(const ProcessImage& last, const OtherThreadsTotals& others) {
        if (last.utime_us < 0 || last.stime_us < 0 || last.main_cpu_us < 0 || !others.cpu_known) return 0;
        const std::int64_t total = add_saturating(last.utime_us, last.stime_us);
        std::int64_t known = add_saturating(last.main_cpu_us, others.cpu_us);
        known = add_saturating(known, std::max<std::int64_t>(0, last.recorder_cpu_us));
        known = add_saturating(known, std::min<std::int64_t>(others.short_lived_without_figures, INT64_MAX / 1000) * 1000);
        const std::int64_t unseen = total - known;
        return unseen >= 20'000 && unseen >= total / 10 ? unseen : 0;
    }

    void add_unseen_flow(ComponentId process, const ProcessImage& first, const ThreadRecord& main, std::int64_t unseen) {
        ThreadRecord t;
        t.tid = 0;
        t.name = "threads that ended unseen";
        t.start_t = first.start_t;
        t.end_t = main.end_t;
        t.utime_us = unseen;
        t.stime_us = 0;
        t.masks = main.masks;
        const ComponentId f = add_flow(process, t, to_string(FlowKind::Unseen));
        add_may_run_on(f, intervals_of(t.masks, t.start_t, t.end_t));
    }

    // The waits each thread was seen making, as WaitedFor paths to the flow
    // waited for: found by tid, else by the pthread handle of the latest
    // thread that started with it before the wait (glibc reuses handles).
    void add_waits(ComponentId process, const std::vector<std::pair<const ThreadRecord*, ComponentId>>& waiters,
                   const std::vector<ProcessImage>& images,
                   const std::unordered_map<std::int64_t, ComponentId>& flow_of_tid) {
        Model& m = run_.model;
        const DataPathType type = *keys_->waited_for;
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
        auto add = [&](ComponentId waiter, const ThreadRecord& t) {
            for (const WaitRecord& w : t.waits) {
                const DataPathId dp = m.add_datapath(waiter, target_of(w), type);
                m.set_attr(dp, keys::start_ns, w.begin_t);
                m.set_attr(dp, keys::end_ns, w.end_t);
                if (w.cpu_ns >= 0) m.set(dp, keys_->wait_cpu_ns, w.cpu_ns);
            }
        };
        for (const auto& [record, flow] : waiters) add(flow, *record);
    }

    // The sampling summary next to each log (<log stem>.samples.jsonl), when
    // the run was sampled: RanOn and MemoryAccess paths (memory_access_paths.hpp).
    void add_samples(const HostDir& host, ComponentId node, const std::vector<ProcessImage>& images,
                     const std::unordered_map<std::int64_t, ComponentId>& flow_of_tid) {
        if (host.sample_files.empty() && host.samples_of_stream.empty()) return;
        for (const ProcessImage& im : images) {
            Result<SampleSummary> summary = make_error("");
            std::string relative;
            if (im.stream != 0) {
                auto it = host.samples_of_stream.find(im.stream);
                if (it == host.samples_of_stream.end()) continue;
                relative = host.name + "/" + formats::run_layout::kNodeFilePrefix +
                           formats::run_layout::kNodeSamplesSuffix + "#" + std::to_string(it->second->stream);
                summary = parse_sample_summary(it->second->text, relative);
            } else {
                relative = samples_file_of(im.file);
                if (!host.sample_files.count(relative)) continue;
                summary = read_sample_summary((fs::path(out_) / relative).string());
            }
            if (!summary) {
                note(LoadNote::Level::Error, relative, summary.error().message + "; its samples are left out");
                continue;
            }
            const MemoryPathStats stats = add_sample_summary(run_.model, node, *summary, [&](std::int64_t tid) {
                auto it = flow_of_tid.find(tid);
                return it == flow_of_tid.end() ? kNoComponent : it->second;
            });
            if (summary->torn_last_line)
                note(LoadNote::Level::Info, relative, "the last line is torn (the process was killed); it is ignored");
            for (const std::string& n : stats.notes) note(LoadNote::Level::Info, relative, n);
        }
    }

    std::string out_;
    RunLoadOptions options_;
    LoadedRun run_;
    std::vector<HostDir> hosts_;
    std::uintmax_t log_bytes_ = 0;
    const RunModelKeys* keys_ = nullptr;  // the run model's keys, interned once
    std::optional<TopologyResolver> resolver_;
    std::vector<ComponentId> pu_by_cpu_;
    Cpuset missing_cpus_;
};

}  // namespace

Result<LoadedRun> load_run(const std::string& out_dir, const RunLoadOptions& options) {
    RunLoader loader(out_dir, options);
    return loader.load();
}

}  // namespace stacksage
