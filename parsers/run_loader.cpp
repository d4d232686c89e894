// Loading a run: directory scan and run.json (run_directory.hpp), per host:
// its event logs (parsed in parallel), its topology (topology_resolver.hpp),
// then its processes and flows added to the merged model
// (process_model_builder.hpp, the builder the recorder's model writer uses
// too) with their sampling summaries. Hosts are handled
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
#include "parsers/command_line.hpp"
#include "parsers/image_notes.hpp"
#include "parsers/input_file.hpp"
#include "parsers/code_location/attribution_resolver.hpp"
#include "parsers/memory_access_paths.hpp"
#include "parsers/node_file_reader.hpp"
#include "parsers/sample_summary.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/process_log.hpp"
#include "parsers/process_model_builder.hpp"
#include "parsers/run_directory.hpp"
#include "parsers/topology_resolver.hpp"

namespace stacksage {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string base_name(std::string_view path) {
    const std::size_t slash = path.rfind('/');
    return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

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
        split_reused_pids(host);
    }

    // A pid the kernel gave again (a job that forks thousands of children
    // wraps pid_max): an image that follows one whose process really ended
    // (process_end or a fatal signal, not exec) is another process.
    static void split_reused_pids(HostDir& host) {
        for (std::size_t i = 0; i < host.groups.size(); ++i) {
            for (std::size_t k = 1; k < host.groups[i].images.size(); ++k) {
                LogGroup& g = host.groups[i];
                const ProcessImage& previous = g.images[k - 1];
                if (!previous.end_known || previous.end_event == event_schema::EventKind::exec ||
                    previous.exec_t >= 0)
                    continue;
                LogGroup later;
                later.pid = g.pid;
                later.rank = g.rank;
                later.images.assign(std::make_move_iterator(g.images.begin() + static_cast<std::ptrdiff_t>(k)),
                                    std::make_move_iterator(g.images.end()));
                g.images.resize(k);
                for (const ProcessImage& image : later.images) later.files.push_back(image.file);
                std::erase_if(g.files, [&](const std::string& f) {
                    return std::find(later.files.begin(), later.files.end(), f) != later.files.end();
                });
                host.groups.push_back(std::move(later));
                break;  // the new group, last, is split in its turn
            }
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
        // Indexing the node's PUs is part of placing the host's topology.
        ProcessModelBuilder builder(run_.model, node);
        run_.stats.topology_seconds += seconds_since(start);

        start = Clock::now();
        for (LogGroup& g : host.groups) {
            if (!g.images.empty()) {
                const AddedProcess added = builder.add_process(host.name, g.images);
                ++run_.stats.processes;
                add_samples(host, node, g.images, added.flow_of_tid);
            }
            g.images.clear();
            g.images.shrink_to_fit();
        }
        run_.stats.flows += builder.flows_added();
        if (!builder.missing_cpus().empty())
            note(LoadNote::Level::Warning, host.name,
                 "masks on host " + host.name + " name CPUs [" + builder.missing_cpus().to_list_string() +
                     "] that its topology does not list as available (outside the job's cgroup when the topology "
                     "was written?); those CPUs are left out of the analysis");
        run_.stats.build_seconds += seconds_since(start);
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
            const MemoryPathStats stats = add_sample_summary(
                run_.model, node, *summary,
                [&](std::int64_t tid) {
                    auto it = flow_of_tid.find(tid);
                    return it == flow_of_tid.end() ? kNoComponent : it->second;
                },
                &code_files_);
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
    // The module files and symbols behind the summaries' call sites, shared
    // by the run's processes: a program's debug information is read once.
    CodeFilesCache code_files_;
};

}  // namespace

Result<LoadedRun> load_run(const std::string& out_dir, const RunLoadOptions& options) {
    RunLoader loader(out_dir, options);
    return loader.load();
}

}  // namespace stacksage
