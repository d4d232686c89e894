#include "parsers/run_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "core/formats/launcher_environment.hpp"
#include "parsers/input_file.hpp"
#include "parsers/node_file_reader.hpp"

namespace stacksage {

namespace fs = std::filesystem;

namespace {

std::int64_t number_after(std::string_view name, std::string_view prefix) {
    const std::size_t at = name.find(prefix);
    if (at == std::string_view::npos) return -1;
    std::int64_t n = 0;
    std::size_t i = at + prefix.size();
    if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
    for (; i < name.size() && name[i] >= '0' && name[i] <= '9' && n < (std::int64_t{1} << 40); ++i)
        n = n * 10 + (name[i] - '0');
    return n;
}

// Job ids may hold characters that do not belong in a directory name
// (PMIx namespaces look like "prterun-n01-1234@1").
std::string sanitize(std::string s) {
    for (char& c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    return s;
}

std::string value_or_empty(const EnvironmentLookup& getenv, const char* name) {
    const char* v = getenv(name);
    return v ? std::string(v) : std::string();
}

// All of it, or the errno that stopped it.
int write_whole(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        if (n == 0) return EIO;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return 0;
}

}  // namespace

// ---- the layout -------------------------------------------------------------

LogFileName parse_log_file_name(std::string_view name) {
    return {number_after(name, run_layout::kPidPrefix), number_after(name, run_layout::kRankPrefix)};
}

bool is_event_log_name(std::string_view name) {
    return name.ends_with(run_layout::kEventLogSuffix) && !name.ends_with(run_layout::kSamplesSuffix);
}

std::int64_t image_number(std::string_view file) {
    if (file.ends_with(run_layout::kEventLogSuffix)) file.remove_suffix(run_layout::kEventLogSuffix.size());
    std::size_t digits = 0;
    while (digits < file.size() && digits < 9 && file[file.size() - 1 - digits] >= '0' &&
           file[file.size() - 1 - digits] <= '9')
        ++digits;
    if (digits == 0 || digits == file.size() || file[file.size() - 1 - digits] != '.') return 0;
    std::int64_t n = 0;
    for (char c : file.substr(file.size() - digits)) n = n * 10 + (c - '0');
    return n;
}

std::string_view log_stem(std::string_view log) {
    if (log.size() > run_layout::kEventLogSuffix.size() && log.ends_with(run_layout::kEventLogSuffix))
        log.remove_suffix(run_layout::kEventLogSuffix.size());
    return log;
}

std::string samples_file_of(std::string_view log) {
    return std::string(log_stem(log)) + std::string(run_layout::kSamplesSuffix);
}

std::string model_file_of(std::string_view log) {
    return std::string(log_stem(log)) + std::string(run_layout::kModelSuffix);
}

bool is_node_file_name(std::string_view name, formats::node_file::FileKind kind) {
    const std::string_view suffix = kind == formats::node_file::FileKind::events    ? formats::run_layout::kNodeEventsSuffix
                                    : kind == formats::node_file::FileKind::samples ? formats::run_layout::kNodeSamplesSuffix
                                                                    : formats::run_layout::kNodeModelsSuffix;
    const std::string_view prefix = formats::run_layout::kNodeFilePrefix;
    if (!name.starts_with(prefix) || !name.ends_with(suffix)) return false;
    std::string_view middle = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (middle.empty()) return true;
    if (middle.front() != '.' || middle.size() < 2) return false;
    return std::all_of(middle.begin() + 1, middle.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string node_stream_label(std::string_view node_file, std::uint64_t stream) {
    return std::string(node_file) + "#" + std::to_string(stream);
}

bool natural_less(std::string_view a, std::string_view b) {
    std::size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        const bool da = a[i] >= '0' && a[i] <= '9', db = b[j] >= '0' && b[j] <= '9';
        if (da && db) {
            std::size_t ie = i, je = j;
            while (ie < a.size() && a[ie] >= '0' && a[ie] <= '9') ++ie;
            while (je < b.size() && b[je] >= '0' && b[je] <= '9') ++je;
            std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
            while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
            while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
            if (na.size() != nb.size()) return na.size() < nb.size();
            if (na != nb) return na < nb;
            i = ie;
            j = je;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i;
        ++j;
    }
    return a.size() - i < b.size() - j;
}

// ---- the scan ---------------------------------------------------------------

namespace {

// The bytes of a log the reader will read, for the model's reservation: a
// file it will refuse (not regular, over the limit) adds nothing.
std::uintmax_t readable_log_bytes(const fs::directory_entry& f) {
    std::error_code ec;
    if (!f.is_regular_file(ec)) return 0;
    const std::uintmax_t bytes = f.file_size(ec);
    return !ec && bytes <= input_limits::kEventLog ? bytes : 0;
}

// One host directory's files into host: its topology, node files, sampling
// summaries and event logs (grouped by pid); the bytes the reader will read
// of them into log_bytes.
void list_host_files(const fs::directory_iterator& files, ScannedHost& host, std::uintmax_t& log_bytes) {
    std::map<std::int64_t, ProcessLogs> by_pid;
    std::vector<ProcessLogs> unnamed;
    for (const fs::directory_entry& f : files) {
        const std::string name = f.path().filename().string();
        if (name == run_layout::kTopologyXml) {
            host.has_topology_file = true;
            continue;
        }
        // Node files: one per node for all its processes.
        if (is_node_file_name(name, formats::node_file::FileKind::events)) {
            host.node_event_files.push_back(host.name + "/" + name);
            log_bytes += readable_log_bytes(f);
            continue;
        }
        if (is_node_file_name(name, formats::node_file::FileKind::samples)) {
            host.node_sample_files.push_back(host.name + "/" + name);
            log_bytes += readable_log_bytes(f);
            continue;
        }
        // Sampling summaries (*.samples.jsonl) are read with the
        // process whose log they extend.
        if (name.ends_with(run_layout::kSamplesSuffix)) {
            host.sample_files.insert(host.name + "/" + name);
            continue;
        }
        if (!is_event_log_name(name)) continue;
        const LogFileName parsed = parse_log_file_name(name);
        const std::int64_t pid = parsed.pid;
        ProcessLogs* g = nullptr;
        if (pid >= 0) {
            g = &by_pid[pid];
        } else {
            unnamed.emplace_back();
            g = &unnamed.back();
        }
        g->pid = pid;
        if (parsed.rank >= 0) g->rank = parsed.rank;
        // host/name: what the notes show. (fs::relative would stat
        // every path component, for each of possibly 100,000 logs.)
        g->files.push_back(host.name + "/" + name);
        log_bytes += readable_log_bytes(f);
    }
    for (auto& [pid, g] : by_pid) host.processes.push_back(std::move(g));
    for (auto& g : unnamed) host.processes.push_back(std::move(g));
}

// A host's files in the order they are read: node files naturally, the
// processes ranks first, in rank order, then the others by pid.
void sort_host_files(ScannedHost& host) {
    std::sort(host.node_event_files.begin(), host.node_event_files.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    std::sort(host.node_sample_files.begin(), host.node_sample_files.end(),
              [](const std::string& a, const std::string& b) { return natural_less(a, b); });
    std::sort(host.processes.begin(), host.processes.end(), [](const ProcessLogs& a, const ProcessLogs& b) {
        const bool ra = a.rank >= 0, rb = b.rank >= 0;
        if (ra != rb) return ra;
        return ra ? (a.rank != b.rank ? a.rank < b.rank : a.pid < b.pid) : a.pid < b.pid;
    });
}

// Why out_dir, where no event log was found, is not a run to read.
// unreadable: the host directories that could not be read, said.
std::string no_event_logs_message(const std::string& out_dir, const std::vector<std::string>& unreadable) {
    if (!unreadable.empty()) {
        // Say what stood in the way (permissions, most often), not that
        // the directory is no run.
        std::string message = "'" + out_dir + "' holds no event log that can be read: " + unreadable.front();
        if (unreadable.size() > 1)
            message += " (and " + std::to_string(unreadable.size() - 1) + " more host directories)";
        return message + "; check the permissions of the run directory";
    }
    // `stacksage run` knew before the start that nothing could be recorded.
    const RunRecordRead record = read_run_record(out_dir);
    if (!record.fields.unrecordable.empty()) {
        std::string why;
        for (const std::string& u : record.fields.unrecordable) why += (why.empty() ? "" : "; ") + u;
        return "'" + out_dir + "' holds no event logs: " + why;
    }
    return "'" + out_dir + "' holds no event logs (<host>/node.events, or <host>/*.jsonl of earlier versions); is it a "
           "directory written by `stacksage run`? Run the job again under `stacksage run -o " + out_dir + " -- ...`";
}

}  // namespace

Result<RunDirectoryScan> scan_run_directory(const std::string& out_dir) {
    std::error_code ec;
    const fs::file_status st = fs::status(out_dir, ec);
    if (ec || !fs::exists(st))
        return make_error("'" + out_dir + "': no such directory; give the directory `stacksage run` wrote (-o)");
    if (!fs::is_directory(st))
        return make_error("'" + out_dir + "' is not a directory; give the directory `stacksage run` wrote (-o)");
    RunDirectoryScan scan;
    fs::directory_iterator it(out_dir, ec);
    if (ec) return make_error("'" + out_dir + "' cannot be read (" + ec.message() + ")");
    std::vector<std::string> unreadable;  // "'OUT/n01' cannot be read (Permission denied)"
    for (const fs::directory_entry& entry : it) {
        if (!entry.is_directory(ec)) continue;
        ScannedHost host;
        host.name = entry.path().filename().string();
        host.path = entry.path();
        fs::directory_iterator files(entry.path(), ec);
        if (ec) {
            scan.unreadable_hosts.push_back({host.name, ec.message()});
            unreadable.push_back("'" + entry.path().string() + "' cannot be read (" + ec.message() + ")");
            continue;
        }
        list_host_files(files, host, scan.log_bytes);
        if (host.processes.empty() && host.node_event_files.empty() && !host.has_topology_file)
            continue;  // not a host directory
        sort_host_files(host);
        scan.logs += host.node_event_files.size();
        for (const ProcessLogs& g : host.processes) scan.logs += g.files.size();
        scan.hosts.push_back(std::move(host));
    }
    std::sort(scan.hosts.begin(), scan.hosts.end(),
              [](const ScannedHost& a, const ScannedHost& b) { return natural_less(a.name, b.name); });
    if (scan.logs == 0) return make_error(no_event_logs_message(out_dir, unreadable));
    return scan;
}

// ---- run.json ---------------------------------------------------------------

std::string run_record_text(const RunRecord& record) {
    nlohmann::json doc;
    doc["schema"] = "stacksage-run";
    doc["version"] = 1;
    doc["tool_version"] = record.tool_version;
    doc["command"] = record.command;
    doc["start"] = {
        {"iso8601", record.start_iso8601},
        {"realtime_ns", record.start_realtime_ns},
    };
    doc["host"] = record.host;
    doc["cwd"] = record.cwd;
    doc["options"] = {
        {"output", record.output},
        {"topology", record.topology},
        {"model", record.model},
        {"sample", record.sample},
    };
    doc["preload"] = record.preload;
    doc["job_id"] = record.job_id.empty() ? nlohmann::json(nullptr) : nlohmann::json(record.job_id);
    doc["launch"] = nullptr;
    if (record.launch) {
        const LaunchRecord& l = *record.launch;
        auto count = [](long n) { return n < 0 ? nlohmann::json(nullptr) : nlohmann::json(n); };
        doc["launch"] = {
            {"launcher", l.launcher},
            {"program", l.program},
            {"remote_ranks", l.remote_ranks},
            {"forwarded_by", l.forwarded_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.forwarded_by)},
            {"variables", l.variables},
            {"hosts", l.hosts},
            {"hosts_from", l.hosts_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.hosts_from)},
            {"hostfile", l.hostfile.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.hostfile)},
            {"processes", count(l.processes)},
            {"nodes", count(l.nodes)},
            {"command", l.command},
        };
    }
    doc["unrecordable"] = record.unrecordable;
    return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

// run.json's launch object, each field only when it has the right type.
LaunchRecord launch_record_of(const nlohmann::json& l) {
    LaunchRecord r;
    auto text = [&](const char* key, std::string& into) {
        if (auto v = l.find(key); v != l.end() && v->is_string()) into = v->get<std::string>();
    };
    auto texts = [&](const char* key, std::vector<std::string>& into) {
        if (auto v = l.find(key); v != l.end() && v->is_array())
            for (const auto& e : *v)
                if (e.is_string()) into.push_back(e.get<std::string>());
    };
    auto count = [&](const char* key, long& into) {
        if (auto v = l.find(key); v != l.end() && v->is_number_integer() && v->get<long>() >= 0) into = v->get<long>();
    };
    text("launcher", r.launcher);
    text("program", r.program);
    text("remote_ranks", r.remote_ranks);
    text("forwarded_by", r.forwarded_by);
    texts("variables", r.variables);
    texts("hosts", r.hosts);
    text("hosts_from", r.hosts_from);
    text("hostfile", r.hostfile);
    count("processes", r.processes);
    count("nodes", r.nodes);
    texts("command", r.command);
    return r;
}

}  // namespace

RunRecordRead read_run_record(const std::string& out_dir) {
    RunRecordRead read;
    const fs::path path = fs::path(out_dir) / run_layout::kRunJson;
    std::string text;
    if (auto problem = read_input_file(path.string(), input_limits::kRunJson, "run.json", text)) {
        const bool missing = problem->kind == InputProblem::Kind::Missing && !problem->through_link;
        read.problem = missing ? RunRecordRead::Problem::Missing : RunRecordRead::Problem::Unreadable;
        read.reason = problem->reason;
        return read;
    }
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        read.problem = RunRecordRead::Problem::NotAnObject;
        return read;
    }
    RunRecordFields& f = read.fields;
    if (auto c = doc.find("command"); c != doc.end() && c->is_array()) {
        std::vector<std::string> args;
        for (const auto& a : *c)
            if (a.is_string()) args.push_back(a.get<std::string>());
        f.command = std::move(args);
    }
    if (auto s = doc.find("start"); s != doc.end() && s->is_object())
        if (auto iso = s->find("iso8601"); iso != s->end() && iso->is_string()) f.start_iso8601 = iso->get<std::string>();
    if (auto v = doc.find("tool_version"); v != doc.end() && v->is_string()) f.tool_version = v->get<std::string>();
    if (auto j = doc.find("job_id"); j != doc.end() && j->is_string()) f.job_id = j->get<std::string>();
    if (auto v = doc.find("version"); v != doc.end() && v->is_number_integer()) f.version = v->get<int>();
    if (auto l = doc.find("launch"); l != doc.end() && l->is_object()) f.launch = launch_record_of(*l);
    if (auto u = doc.find("unrecordable"); u != doc.end() && u->is_array())
        for (const auto& e : *u)
            if (e.is_string()) f.unrecordable.push_back(e.get<std::string>());
    return read;
}

// ---- the claim --------------------------------------------------------------

RunDirectoryClaim claim_run_directory(const fs::path& out, const std::string& run_json, const std::string& job_id,
                                      bool is_rank, std::string& error) {
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) {
        error = ec.message();
        return RunDirectoryClaim::Failed;
    }
    const fs::path path = out / run_layout::kRunJson;
    std::string temporary = (out / ".run.json.XXXXXX").string();
    int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) {
        error = std::strerror(errno);
        return RunDirectoryClaim::Failed;
    }
    int write_error = write_whole(fd, run_json);
    const mode_t umask_now = ::umask(0);  // read it: mkostemp made the file 0600
    ::umask(umask_now);
    if (::fchmod(fd, 0644 & ~umask_now) != 0 && write_error == 0) write_error = errno;
    if (::close(fd) != 0 && write_error == 0) write_error = errno;
    const int link_error = write_error != 0 ? write_error : (::link(temporary.c_str(), path.c_str()) == 0 ? 0 : errno);
    ::unlink(temporary.c_str());
    if (link_error == 0) return RunDirectoryClaim::Ours;
    if (link_error != EEXIST) {
        error = std::strerror(link_error);
        return RunDirectoryClaim::Failed;
    }
    // Another run's: ours to share only when this is one rank of the job it records.
    if (job_id.empty() || !is_rank) return RunDirectoryClaim::Taken;
    std::ifstream in(path);
    nlohmann::json other = nlohmann::json::parse(in, nullptr, false);
    const bool same_job = other.is_object() && other.contains("job_id") && other["job_id"].is_string() &&
                          other["job_id"].get<std::string>() == job_id;
    return same_job ? RunDirectoryClaim::Joined : RunDirectoryClaim::Taken;
}

// ---- the job and the rank ---------------------------------------------------

const char* process_environment(const char* name) { return std::getenv(name); }

std::string job_id_from_environment(const EnvironmentLookup& getenv) {
    if (std::string slurm = value_or_empty(getenv, formats::kSlurmJobVariable); !slurm.empty()) {
        std::string step = value_or_empty(getenv, formats::kSlurmStepVariable);
        return sanitize(step.empty() ? slurm : slurm + "." + step);
    }
    for (const char* name : formats::kJobIdVariables)
        if (std::string v = value_or_empty(getenv, name); !v.empty()) return sanitize(v);
    return {};
}

long rank_from_environment(const EnvironmentLookup& getenv) {
    for (const char* name : formats::kRankVariables) {
        std::string v = value_or_empty(getenv, name);
        if (v.empty()) continue;
        char* end = nullptr;
        long r = std::strtol(v.c_str(), &end, 10);
        if (end != nullptr && *end == '\0') return r;
    }
    return -1;
}

std::string default_run_directory_name(const std::string& job_id, std::time_t now, int n) {
    std::string base;
    if (!job_id.empty()) {
        base = std::string(run_layout::kDefaultNamePrefix) + job_id;
    } else {
        std::tm tm{};
        localtime_r(&now, &tm);
        char stamp[32];
        std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
        base = std::string(run_layout::kDefaultNamePrefix) + stamp;
    }
    return n <= 1 ? base : base + "-" + std::to_string(n);
}

}  // namespace stacksage
