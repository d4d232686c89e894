// Writing run directories as `stacksage run` and the preload would
// (docs/event-log.md): run.json, <host>/topology.xml and event logs, for
// tests and benchmarks that need runs of a shape no machine here can give
// (a 32-core node, 1,024 nodes, a job-restricted cgroup).
#pragma once

#include <hwloc.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "tests/support/node_file_writer.hpp"

namespace stacksage::testing {

// An hwloc XML topology from hwloc's synthetic description ("pack:2 core:8
// pu:2"), as the preload exports it. allowed: the CPUs the job may use, in
// list form ("" for all): the topology is then job-restricted.
inline std::string synthetic_topology_xml(const std::string& description, const std::string& host,
                                          const std::string& allowed = "") {
    hwloc_topology_t topo = nullptr;
    hwloc_topology_init(&topo);
    hwloc_topology_set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    if (hwloc_topology_set_synthetic(topo, description.c_str()) != 0 || hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        throw std::runtime_error("bad synthetic topology: " + description);
    }
    hwloc_obj_add_info(hwloc_get_root_obj(topo), "HostName", host.c_str());
    if (!allowed.empty()) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        hwloc_bitmap_list_sscanf(set, allowed.c_str());
        hwloc_topology_allow(topo, set, nullptr, HWLOC_ALLOW_FLAG_CUSTOM);
        hwloc_bitmap_free(set);
    }
    char* xml = nullptr;
    int len = 0;
    hwloc_topology_export_xmlbuffer(topo, &xml, &len, 0);
    std::string out(xml, static_cast<std::size_t>(len > 0 ? len - 1 : 0));
    hwloc_free_xmlbuffer(topo, xml);
    hwloc_topology_destroy(topo);
    return out;
}

// A temporary directory, removed with everything in it.
class TempDir {
public:
    TempDir() {
        std::string tmpl = (std::filesystem::temp_directory_path() / "stacksage-test-XXXXXX").string();
        if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string str() const { return path_.string(); }

private:
    std::filesystem::path path_;
};

struct SyntheticThread {
    std::int64_t tid = 0;
    std::string creator_module = "/usr/lib/x86_64-linux-gnu/libgomp.so.1";
    std::string cpuset;                  // at start; "" means the process's
    std::int64_t start_ns = -1;          // -1: the process's start + 1 ms
    std::int64_t end_ns = -1;            // -1: the process's end - 1 ms
    std::int64_t cpu_time_us = -1;       // -1: busy the whole lifetime
    std::int64_t nvcsw = 1, nivcsw = 1;  // context switches: voluntary (blocked), involuntary (preempted)
    std::int64_t run_delay_ns = -1;      // its wait for a CPU; -1: not written
    bool write_end = true;               // false: no thread_end (killed, or alive at the process's exit)
    bool usage_at_exit = false;          // with write_end false: its CPU time written at the process's exit
    std::vector<std::pair<std::int64_t, std::string>> affinity;  // (t, new mask) changes by the thread itself
    std::string affinity_caller_module;  // the module its affinity calls came from; "" writes null
};

struct SyntheticProcess {
    std::string host = "n01";
    std::int64_t pid = 1000;
    std::int64_t rank = -1;
    std::string launcher;                // non-empty: a launcher process
    std::string exe = "/opt/app/bin/app";
    std::string cpuset;                  // the inherited mask
    std::string cgroup_cpuset;           // "" -> null
    std::string online_cpus;             // "" -> null
    std::int64_t start_ns = 1'000'000'000;
    std::int64_t end_ns = 11'000'000'000;
    std::int64_t main_cpu_time_us = -1;  // -1: busy the whole lifetime
    std::int64_t main_nvcsw = 1, main_nivcsw = 1;
    std::int64_t main_run_delay_ns = -1; // the main thread's wait for a CPU; -1: not written
    bool write_end = true;               // false: no process_end (SIGKILL)
    bool mpi = false;                    // mpi_init and mpi_finalize events
    std::int64_t mpi_size = 2;           // MPI_COMM_WORLD's size in mpi_init
    std::vector<std::string> cmdline;    // empty: the exe alone
    std::map<std::string, std::string> env;
    std::map<std::string, std::string> identity;
    std::vector<SyntheticThread> threads;
};

inline std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (static_cast<unsigned char>(c) < 0x20) {  // control characters: \u00XX, as JSON requires
            out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
            continue;
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

inline std::string json_mask(const std::string& s) { return json_string(s); }

// The event log of one process, as the preload writes it.
inline std::string event_log_text(const SyntheticProcess& p) {
    std::string out;
    out.reserve(512 + p.threads.size() * 512);
    auto head = [&](const char* ev, std::int64_t t, std::int64_t tid) {
        return fmt::format("{{\"v\":1,\"ev\":\"{}\",\"t\":{},\"pid\":{},\"tid\":{}", ev, t, p.pid, tid);
    };
    std::string env = "{", identity = "{";
    for (const auto& [k, v] : p.env) env += (env.size() > 1 ? "," : "") + json_string(k) + ":" + json_string(v);
    for (const auto& [k, v] : p.identity)
        identity += (identity.size() > 1 ? "," : "") + json_string(k) + ":" + json_string(v);
    env += "}";
    identity += "}";
    std::string cmdline;
    for (const std::string& a : p.cmdline) cmdline += (cmdline.empty() ? "" : ",") + json_string(a);
    if (cmdline.empty()) cmdline = json_string(p.exe);
    out += head("process_start", p.start_ns, p.pid) +
           fmt::format(",\"origin\":\"exec\",\"image\":0,\"ppid\":1,\"host\":{},\"rank\":{},\"launcher\":{},"
                       "\"exe\":{},\"cmdline\":[{}],\"realtime_ns\":1700000000000000000,\"monotonic_ns\":{},"
                       "\"cpuset\":{},\"cpu\":{},\"cgroup_cpuset\":{},\"online_cpus\":{},\"log\":\"x.jsonl\","
                       "\"env\":{},\"identity\":{},\"tracer\":{{\"version\":\"0.1.0\",\"schema\":1}}}}\n",
                       json_string(p.host), p.rank >= 0 ? std::to_string(p.rank) : "null",
                       p.launcher.empty() ? "null" : json_string(p.launcher), json_string(p.exe), cmdline,
                       p.start_ns, json_mask(p.cpuset), 0,
                       p.cgroup_cpuset.empty() ? "null" : json_string(p.cgroup_cpuset),
                       p.online_cpus.empty() ? "null" : json_string(p.online_cpus), env, identity);
    std::int64_t threads_cpu = 0, threads_nvcsw = 0, threads_nivcsw = 0;
    std::uint64_t seq = 0;
    for (const SyntheticThread& t : p.threads) {
        const std::int64_t start = t.start_ns >= 0 ? t.start_ns : p.start_ns + 1'000'000;
        const std::string mask = t.cpuset.empty() ? p.cpuset : t.cpuset;
        out += head("thread_start", start, t.tid) +
               fmt::format(",\"seq\":{},\"pthread\":\"0x7f{:x}\",\"creator_tid\":{},\"creator_module\":{},"
                           "\"start_module\":{},\"start_offset\":\"0x1cc40\",\"create_t\":{},\"cpuset\":{},\"cpu\":0}}\n",
                           ++seq, t.tid, p.pid, json_string(t.creator_module), json_string(t.creator_module),
                           start - 1000, json_mask(mask));
    }
    if (p.mpi)
        out += head("mpi_init", p.start_ns + 2'000'000, p.pid) +
               fmt::format(",\"api\":\"MPI_Init\",\"rc\":0,\"rank\":{},\"size\":{},\"thread_level\":0,\"threads\":[]}}\n",
                           p.rank >= 0 ? p.rank : 0, p.mpi_size);
    for (const SyntheticThread& t : p.threads)
        for (const auto& [when, mask] : t.affinity)
            out += head("affinity", when, t.tid) +
                   fmt::format(",\"api\":\"sched_setaffinity\",\"target_tid\":{},\"target_is_caller\":true,"
                               "\"target_in_process\":true,\"caller_module\":{},\"callers\":[],\"old_cpuset\":null,"
                               "\"requested_cpuset\":{},\"cpuset\":{},\"rc\":0}}\n",
                               t.tid, t.affinity_caller_module.empty() ? "null" : json_string(t.affinity_caller_module),
                               json_mask(mask), json_mask(mask));
    for (const SyntheticThread& t : p.threads) {
        if (!t.write_end) continue;
        const std::int64_t start = t.start_ns >= 0 ? t.start_ns : p.start_ns + 1'000'000;
        const std::int64_t end = t.end_ns >= 0 ? t.end_ns : p.end_ns - 1'000'000;
        const std::int64_t cpu = t.cpu_time_us >= 0 ? t.cpu_time_us : (end - start) / 1000;
        threads_cpu += cpu;
        threads_nvcsw += t.nvcsw;
        threads_nivcsw += t.nivcsw;
        const std::string mask = !t.affinity.empty() ? t.affinity.back().second : t.cpuset.empty() ? p.cpuset : t.cpuset;
        out += head("thread_end", end, t.tid) +
               fmt::format(",\"how\":\"return\",\"seq\":1,\"cpuset\":{},\"cpu\":0,\"utime_us\":{},\"stime_us\":0,"
                           "\"nvcsw\":{},\"nivcsw\":{},\"duration_ns\":{}{}}}\n",
                           json_mask(mask), cpu, t.nvcsw, t.nivcsw, end - start,
                           t.run_delay_ns >= 0 ? fmt::format(",\"run_delay_ns\":{}", t.run_delay_ns) : "");
    }
    for (const SyntheticThread& t : p.threads) {
        if (t.write_end || !t.usage_at_exit || !p.write_end) continue;
        const std::int64_t start = t.start_ns >= 0 ? t.start_ns : p.start_ns + 1'000'000;
        const std::int64_t cpu = t.cpu_time_us >= 0 ? t.cpu_time_us : (p.end_ns - start) / 1000;
        threads_cpu += cpu;
        out += head("thread_usage_at_exit", p.end_ns - 1, p.pid) +
               fmt::format(",\"target_tid\":{},\"cpu_us\":{},\"duration_ns\":{}{}}}\n", t.tid, cpu, p.end_ns - 1 - start,
                           t.run_delay_ns >= 0 ? fmt::format(",\"run_delay_ns\":{}", t.run_delay_ns) : "");
    }
    if (p.mpi)
        out += head("mpi_finalize", p.end_ns - 500'000, p.pid) +
               ",\"api\":\"MPI_Finalize\",\"rc\":0,\"threads\":[]}\n";
    if (p.write_end) {
        const std::int64_t main_cpu =
            p.main_cpu_time_us >= 0 ? p.main_cpu_time_us : (p.end_ns - p.start_ns) / 1000;
        out += head("process_end", p.end_ns, p.pid) +
               fmt::format(",\"how\":\"exit\",\"status\":0,\"utime_us\":{},\"stime_us\":0,\"nvcsw\":{},\"nivcsw\":{},"
                           "\"minflt\":1,\"majflt\":0,\"maxrss_kb\":1000,\"threads_created\":{},\"threads_untraced\":0,"
                           "\"duration_ns\":{}{}}}\n",
                           main_cpu + threads_cpu, p.main_nvcsw + threads_nvcsw, p.main_nivcsw + threads_nivcsw,
                           p.threads.size(), p.end_ns - p.start_ns,
                           p.main_run_delay_ns >= 0 ? fmt::format(",\"main_run_delay_ns\":{}", p.main_run_delay_ns) : "");
    }
    return out;
}

// A run directory under construction.
class SyntheticRun {
public:
    explicit SyntheticRun(std::filesystem::path dir) : dir_(std::move(dir)) {
        std::filesystem::create_directories(dir_);
    }

    void write_run_json(const std::string& command_json_array = "[\"./app\"]") {
        write_file(dir_ / "run.json",
                   "{\"schema\":\"stacksage-run\",\"version\":1,\"tool_version\":\"0.1.0\",\"command\":" +
                       command_json_array +
                       ",\"start\":{\"iso8601\":\"2024-01-01T00:00:00Z\",\"realtime_ns\":1},\"host\":\"n01\","
                       "\"job_id\":null}\n");
    }

    // The host's topology.xml from an hwloc synthetic description, or given text.
    void add_host(const std::string& host, const std::string& description, const std::string& allowed = "") {
        set_topology_text(host, synthetic_topology_xml(description, host, allowed));
    }
    void set_topology_text(const std::string& host, const std::string& xml) {
        std::filesystem::create_directories(dir_ / host);
        write_file(dir_ / host / "topology.xml", xml);
    }
    void copy_topology(const std::string& host, const std::filesystem::path& file) {
        std::filesystem::create_directories(dir_ / host);
        std::filesystem::copy_file(file, dir_ / host / "topology.xml",
                                   std::filesystem::copy_options::overwrite_existing);
    }

    // Writes the process's log as a stream of its host's node file (the
    // recorder's layout), written by write_node_files(); returns the node
    // file's path.
    std::filesystem::path add_process_stream(const SyntheticProcess& p) {
        auto [it, added] = node_files_.try_emplace(p.host, p.host);
        it->second.add_stream(event_log_text(p), p.pid, p.launcher.empty() ? p.rank : -1, p.write_end);
        return dir_ / p.host / "node.events";
    }
    // Writes the node files of the streams added so far (and forgets them).
    void write_node_files() {
        for (const auto& [host, file] : node_files_) {
            std::filesystem::create_directories(dir_ / host);
            write_file(dir_ / host / "node.events", file.bytes());
        }
        node_files_.clear();
    }

    // Writes the process's log in the earlier layout (one file per process
    // image); returns its path.
    std::filesystem::path add_process(const SyntheticProcess& p) {
        std::filesystem::create_directories(dir_ / p.host);
        const std::string name = p.rank >= 0 && p.launcher.empty()
                                     ? fmt::format("rank-{:04d}.pid-{}.jsonl", p.rank, p.pid)
                                     : fmt::format("pid-{}.jsonl", p.pid);
        const std::filesystem::path path = dir_ / p.host / name;
        write_file(path, event_log_text(p));
        return path;
    }

    const std::filesystem::path& dir() const { return dir_; }

    static void write_file(const std::filesystem::path& path, const std::string& text) {
        std::ofstream out(path, std::ios::binary | std::ios::trunc);
        out << text;
    }

private:
    std::filesystem::path dir_;
    std::map<std::string, NodeFileWriter> node_files_;
};

// A process of `threads` busy threads (the main one included), all with `cpuset`.
inline SyntheticProcess busy_process(const std::string& host, std::int64_t pid, std::int64_t rank, unsigned threads,
                                     const std::string& cpuset) {
    SyntheticProcess p;
    p.host = host;
    p.pid = pid;
    p.rank = rank;
    p.cpuset = cpuset;
    for (unsigned t = 1; t < threads; ++t) {
        SyntheticThread th;
        th.tid = pid * 100 + t;
        p.threads.push_back(th);
    }
    return p;
}

// A cluster of alike nodes, some of which may differ: what
// bench/synthetic_run_generator.cpp writes, and the tests of reports at
// scale (a 1,000-node job whose nodes group).
struct SyntheticCluster {
    long nodes = 16;
    long ranks = 64;     // per node
    long threads = 16;   // per rank, the main thread included
    long cores = 64;     // per node: hwloc synthetic "pack:2 core:C/2 pu:1"; even
    bool bound = false;  // each rank on core (rank % cores); otherwise on the whole node
    // > 0: each rank bound to this many cores of its own (rank r to cores
    // [r*K, r*K+K-1], modulo the usable cores), as `--map-by ppr:R:node:PE=K`.
    long cores_per_rank = 0;
    // Node numbers (1-based) that differ from the others:
    std::set<long> overloaded_nodes;  // each rank runs twice its threads
    std::set<long> idle_nodes;        // the ranks are kept to the first half of the cores
    // Alike nodes with figures that differ: node n's threads (other than the
    // main one) start (n - 1) % 5 x stagger_ns after their process, so a
    // bound, over-subscribed cluster is over-demanded "for the whole run" on
    // some nodes and for 96-99 % of it on others (10 s runs, stagger 100 ms).
    std::int64_t stagger_ns = 0;
    int host_digits = 4;  // n0001
    // One node.events per host (the recorder's layout); false: one log per
    // process (the earlier layout).
    bool node_files = true;
    // Node numbers (1-based) whose ranks are odd ones out: their OpenMP
    // threads set their own affinity to one core each, half of them to the
    // same core.
    std::set<long> odd_nodes;
};

// Writes run.json, each host's topology and each rank's log under `dir`.
inline void write_synthetic_cluster(const std::filesystem::path& dir, const SyntheticCluster& c) {
    SyntheticRun run(dir);
    run.write_run_json(
        fmt::format(R"(["mpirun","-np","{}","--bind-to","{}","./app"])", c.nodes * c.ranks, c.bound ? "core" : "none"));
    const std::string description = fmt::format("pack:2 core:{} pu:1", c.cores / 2);
    // One topology text, its host name swapped per node: 1,000 nodes need
    // not run hwloc 1,000 times.
    const std::string marker = "stacksage-synthetic-host";
    const std::string xml = synthetic_topology_xml(description, marker);
    const std::size_t at = xml.find(marker);
    for (long n = 1; n <= c.nodes; ++n) {
        const std::string host = fmt::format("n{:0{}d}", n, c.host_digits);
        std::string node_xml = xml;
        if (at != std::string::npos) node_xml.replace(at, marker.size(), host);
        run.set_topology_text(host, node_xml);
        const bool overloaded = c.overloaded_nodes.count(n) > 0;
        const bool idle = c.idle_nodes.count(n) > 0;
        const long usable = idle ? std::max(1L, c.cores / 2) : c.cores;
        const std::string all = fmt::format("0-{}", usable - 1);
        for (long r = 0; r < c.ranks; ++r) {
            const long rank = (n - 1) * c.ranks + r;
            const unsigned threads = static_cast<unsigned>(overloaded ? 2 * c.threads : c.threads);
            const long first = (r * c.cores_per_rank) % usable;
            const std::string mask = c.cores_per_rank > 0 ? fmt::format("{}-{}", first, std::min(usable - 1, first + c.cores_per_rank - 1))
                                     : c.bound              ? std::to_string(r % usable)
                                                            : all;
            SyntheticProcess p = busy_process(host, 10000 + r, rank, threads, mask);
            for (SyntheticThread& t : p.threads) t.start_ns = p.start_ns + 1'000'000 + ((n - 1) % 5) * c.stagger_ns;
            if (c.odd_nodes.count(n) > 0)
                for (std::size_t i = 0; i < p.threads.size(); ++i)
                    p.threads[i].affinity.emplace_back(p.threads[i].start_ns + 1000,
                                                       std::to_string(i % 2 == 0 ? 0 : (r % usable)));
            p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
            p.env["OMP_NUM_THREADS"] = std::to_string(threads);
            if (c.node_files)
                run.add_process_stream(p);
            else
                run.add_process(p);
        }
        run.write_node_files();  // one host at a time: memory holds one node's streams
    }
}

}  // namespace stacksage::testing
