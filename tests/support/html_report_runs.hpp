// Run directories for the HTML report and its exports: a real 160-PU
// topology with findings, memory samples, an affinity change and injection
// attempts (tests/reports/test_html_report.cpp, the browser test), and large
// runs for the page's benchmark (bench/html.cmake).
#pragma once

#include <filesystem>
#include <string>

#include <fmt/core.h>

#include "tests/support/synthetic_run.hpp"

namespace stacksage::testing {

// What the injection attempts write; the page must show them as text.
inline const std::string kInjectedThreadName = "</script><script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=2\">";
inline const std::string kInjectedExe = "/opt/app/bin/app<img src=x onerror=window.__pwned=3>&amp;</script>";

// A sampled memory access record (docs/sample-file.md).
inline std::string sample_access(std::int64_t tid, int cpu, const std::string& level, int node, bool remote,
                                 std::uint64_t count, std::uint64_t latency) {
    std::string hist = "[";
    for (int b = 0; b < 16; ++b) hist += std::string(b ? "," : "") + (b == 8 ? std::to_string(count) : "0");
    hist += "]";
    return fmt::format(
        "{{\"v\":1,\"rec\":\"access\",\"tid\":{},\"backend\":\"pebs\",\"cpu\":{},\"level\":\"{}\",\"op\":\"load\","
        "\"node\":{},\"remote\":{},\"hops\":0,\"missed\":false,\"count\":{},\"weight_sum\":{},\"weight_max\":{},"
        "\"latency_histogram\":{}}}\n",
        tid, cpu, level, node, remote ? "true" : "false", count, count * latency, latency, hist);
}

inline std::string thread_name_event(std::int64_t pid, std::int64_t tid, std::int64_t t, const std::string& name) {
    return fmt::format("{{\"v\":1,\"ev\":\"thread_name\",\"t\":{},\"pid\":{},\"tid\":{},\"target_tid\":{},"
                       "\"target_pthread\":\"0x7f{:x}\",\"name\":{}}}\n",
                       t, pid, tid, tid, tid, json_string(name));
}

// n01: Intel Sapphire Rapids, 2 x Xeon Max 9460 (160 PUs, real hwloc XML).
//   rank 0 (pid 1000): 8 threads bound one per core on PUs 0-7 (main thread on 0), one of them
//     named kInjectedThreadName, one re-binding itself from PU 7 to PU 8;
//     memory samples served by L1, L2, L3, local and remote DRAM.
//   rank 1 (pid 2000), executable kInjectedExe: 8 threads on PUs 40-43
//     (over-subscribed: a finding with resources 40-43).
// n02: a small synthetic node with one well-placed rank whose main thread
//   only waits (a service flow, drawn light in the timeline).
inline void write_html_demo_run(const std::filesystem::path& dir) {
    SyntheticRun run(dir);
    run.write_run_json(R"(["mpirun","-np","3","--bind-to","core","./app"])");
    run.copy_topology("n01", std::filesystem::path(STACKSAGE_TEST_DATA_DIR) / "hwloc-xml/Intel-SapphireRapids-2xXeonMax9460.xml");
    run.add_host("n02", "pack:2 core:4 pu:2");

    SyntheticProcess r0 = busy_process("n01", 1000, 0, 1, "0");
    r0.threads.clear();
    for (int t = 1; t < 8; ++t) {
        SyntheticThread th;
        th.tid = 1000 * 100 + t;
        th.cpuset = std::to_string(t);
        th.start_ns = r0.start_ns + 1'000'000 + t * 200'000'000;
        r0.threads.push_back(th);
    }
    r0.threads.back().affinity.push_back({r0.start_ns + 4'000'000'000, "8"});
    r0.mpi = true;
    const std::filesystem::path log = run.add_process(r0);
    {
        // The names go before the process's end, where the preload would have written them.
        std::string text = event_log_text(r0);
        const std::size_t end = text.find("{\"v\":1,\"ev\":\"process_end\"");
        text.insert(end, thread_name_event(1000, 1000, r0.start_ns + 5'000'000, "main-solver") +
                             thread_name_event(1000, 100001, r0.start_ns + 300'000'000, kInjectedThreadName));
        SyntheticRun::write_file(log, text);
    }
    std::string s = "{\"v\":1,\"rec\":\"sampling\",\"pid\":1000,\"host\":\"n01\",\"start_ns\":1,\"end_ns\":2,"
                    "\"requested\":\"auto\",\"used\":[\"pebs\"],\"periods\":{\"pebs\":2003,\"ibs\":65536,\"pagefault\":1,"
                    "\"cpuclock_ns\":1000000}}\n";
    for (int cpu = 0; cpu < 8; ++cpu) {
        const std::int64_t tid = cpu == 0 ? 1000 : 100000 + cpu;
        s += sample_access(tid, cpu, "L1", -1, false, 1000 + 100 * cpu, 5);
        s += sample_access(tid, cpu, "L2", -1, false, 300 + 50 * cpu, 14);
        s += sample_access(tid, cpu, "L3", -1, false, 200 + 10 * cpu, 40);
        s += sample_access(tid, cpu, "local_dram", 0, false, 100 + 20 * cpu, 200);
        if (cpu >= 4) s += sample_access(tid, cpu, "remote_dram", 1, true, 50 * cpu, 350);
    }
    s += "{\"v\":1,\"rec\":\"end\",\"threads\":8}\n";
    SyntheticRun::write_file(dir / "n01" / "rank-0000.pid-1000.samples.jsonl", s);

    SyntheticProcess r1 = busy_process("n01", 2000, 1, 8, "40-43");
    r1.exe = kInjectedExe;
    run.add_process(r1);

    SyntheticProcess r2 = busy_process("n02", 3000, 2, 8, "0-7");
    r2.main_cpu_time_us = 1000;  // its main thread only waits: a service flow
    run.add_process(r2);
}

// A large run for the page's benchmark: `nodes` nodes of `pus` PUs (2
// packages, 2 PUs per core), `ranks` ranks per node, each with
// pus/ranks threads bound one per PU (the main thread on the rank's first);
// on every 8th node the first rank's threads crowd onto two PUs.
inline void write_large_html_run(const std::filesystem::path& dir, int nodes, int pus, int ranks) {
    SyntheticRun run(dir);
    run.write_run_json(fmt::format(R"(["mpirun","-np","{}","./app"])", nodes * ranks));
    const int per_rank = pus / ranks;
    const std::string description = fmt::format("pack:2 numa:1 l3:1 l2:{} l1d:1 core:1 pu:2", pus / 4);
    const std::string topology = synthetic_topology_xml(description, "h");
    for (int n = 0; n < nodes; ++n) {
        const std::string host = fmt::format("n{:03d}", n + 1);
        std::string xml = topology;
        const std::string from = "value=\"h\"";
        if (const std::size_t at = xml.find(from); at != std::string::npos) xml.replace(at, from.size(), "value=\"" + host + "\"");
        run.set_topology_text(host, xml);
        for (int r = 0; r < ranks; ++r) {
            const std::int64_t pid = 10000 + n * 1000 + r;
            SyntheticProcess p = busy_process(host, pid, n * ranks + r, 1, std::to_string(r * per_rank));
            for (int t = 1; t < per_rank; ++t) {
                SyntheticThread th;
                th.tid = pid * 1000 + t;
                const bool crowd = n % 8 == 0 && r == 0;
                th.cpuset = std::to_string(r * per_rank + (crowd ? t % 2 : t));
                th.start_ns = p.start_ns + 1'000'000 + t * 1'000'000;
                p.threads.push_back(th);
            }
            run.add_process(p);
        }
    }
}

// The node overview's run: six small nodes with one bound rank per core,
// n03 over-subscribed (two threads per rank), the others clean; the page
// groups them as n03, then n[01-02,04-06].
inline void write_html_cluster_run(const std::filesystem::path& dir) {
    SyntheticCluster c;
    c.nodes = 6;
    c.ranks = 2;
    c.threads = 1;
    c.cores = 2;
    c.bound = true;
    c.host_digits = 2;
    c.overloaded_nodes = {3};
    write_synthetic_cluster(dir, c);
}

// The page of a job of many alike nodes and a few odd ones: `nodes` nodes
// (n001, ...) of 8 cores, 2 ranks of 4 threads each bound to 4 cores of its
// own; n007 and n030 over-subscribed (twice the threads), n012 half idle
// (its ranks kept to 4 cores), n021 odd (its threads pin themselves). The
// analysis groups them as n012, n021, n[007,030] and the rest.
inline SyntheticCluster html_groups_cluster(long nodes) {
    SyntheticCluster c;
    c.nodes = nodes;
    c.ranks = 2;
    c.threads = 4;
    c.cores = 8;
    c.cores_per_rank = 4;
    c.host_digits = 3;
    c.overloaded_nodes = {7, 30};
    c.idle_nodes = {12};
    c.odd_nodes = {21};
    return c;
}

inline void write_html_groups_run(const std::filesystem::path& dir, long nodes) {
    write_synthetic_cluster(dir, html_groups_cluster(nodes));
}

}  // namespace stacksage::testing
