// stacksage_synthetic_run: writes a recorded run of any size, as the preload
// and `stacksage run` would (tests/support/synthetic_run.hpp), for the
// analyzer's benchmark (bench/analyzer_benchmark.sh) and for trying the
// reports on a job of a thousand nodes.
//
//   stacksage_synthetic_run OUT --nodes 1024 --ranks 64 --threads 16 [--cores 64] [--bound | --cores-per-rank K]
//                           [--overloaded-nodes LIST] [--idle-nodes LIST] [--odd-nodes LIST]
//                           [--stagger-ms MS] [--per-process-logs]
//
// Every node gets the same topology (hwloc synthetic "pack:2 core:C/2 pu:1",
// with its own host name, n0001, n0002, ...), every rank a log with its main
// thread and threads-1 OpenMP threads. --bound places each rank on its own
// core (the threads then over-subscribe it, as with `--bind-to core` and too
// many OMP threads); --cores-per-rank K gives each rank K cores of its own
// (as `--map-by ppr:R:node:PE=K`); otherwise each rank may use the whole node. Nodes that
// differ, by number (1-based, "3,10-12"): --overloaded-nodes run twice the
// threads per rank, --idle-nodes keep their ranks to the first half of the
// cores, --odd-nodes have their OpenMP threads pin themselves (half of them
// to core 0). --stagger-ms makes alike nodes' figures differ: node n's
// threads start (n-1) % 5 x MS after their process. Each node's processes
// are streams of its OUT/<host>/node.events, as the recorder writes them;
// --per-process-logs writes the earlier layout (one .jsonl per process).
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <string>

#include "tests/support/synthetic_run.hpp"

using namespace stacksage::testing;

namespace {

// "3,10-12" -> {3, 10, 11, 12}; false on anything else.
bool parse_numbers(const std::string& text, std::set<long>& out) {
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t end = std::min(text.find(',', at), text.size());
        const std::string item = text.substr(at, end - at);
        char* rest = nullptr;
        const long low = std::strtol(item.c_str(), &rest, 10);
        long high = low;
        if (rest == item.c_str()) return false;
        if (*rest == '-') {
            const char* from = rest + 1;
            high = std::strtol(from, &rest, 10);
            if (rest == from) return false;
        }
        if (*rest != '\0' || low < 1 || high < low || high - low > 10'000'000) return false;
        for (long n = low; n <= high; ++n) out.insert(n);
        at = end + 1;
    }
    return !out.empty();
}

}  // namespace

int main(int argc, char** argv) {
    const char* usage =
        "usage: stacksage_synthetic_run OUT [--nodes N] [--ranks R] [--threads T] [--cores C] [--bound | --cores-per-rank K]\n"
        "       [--overloaded-nodes LIST] [--idle-nodes LIST] [--odd-nodes LIST] [--stagger-ms MS]\n"
        "       [--per-process-logs]   (LIST: node numbers, \"3,10-12\")\n";
    if (argc < 2) {
        std::cerr << usage;
        return 2;
    }
    const std::string out = argv[1];
    SyntheticCluster c;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto next_text = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        auto next = [&] { return std::atol(next_text().c_str()); };
        if (a == "--nodes") c.nodes = next();
        else if (a == "--ranks") c.ranks = next();
        else if (a == "--threads") c.threads = next();
        else if (a == "--cores") c.cores = next();
        else if (a == "--bound") c.bound = true;
        else if (a == "--cores-per-rank") c.cores_per_rank = next();
        else if (a == "--stagger-ms") c.stagger_ns = next() * 1'000'000;
        else if (a == "--per-process-logs") c.node_files = false;
        else if (a == "--overloaded-nodes" || a == "--idle-nodes" || a == "--odd-nodes") {
            const std::string list = next_text();
            std::set<long>& into = a == "--idle-nodes" ? c.idle_nodes : a == "--odd-nodes" ? c.odd_nodes : c.overloaded_nodes;
            if (!parse_numbers(list, into)) {
                std::cerr << "stacksage_synthetic_run: " << a << " takes node numbers from 1, as \"3,10-12\", not \""
                          << list << "\"\n";
                return 2;
            }
        } else {
            std::cerr << "stacksage_synthetic_run: unknown option " << a << "\n" << usage;
            return 2;
        }
    }
    if (c.nodes < 1 || c.ranks < 1 || c.threads < 1 || c.cores < 2 || c.cores % 2 != 0 || c.stagger_ns < 0 || c.cores_per_rank < 0 ||
        c.cores_per_rank > c.cores) {
        std::cerr
            << "stacksage_synthetic_run: --nodes, --ranks, --threads >= 1, an even --cores >= 2, --stagger-ms >= 0, --cores-per-rank from 0 to --cores\n";
        return 2;
    }
    std::filesystem::remove_all(out);
    write_synthetic_cluster(out, c);
    std::cout << "stacksage_synthetic_run: " << c.nodes << " nodes x " << c.ranks << " ranks x " << c.threads
              << " threads = " << c.nodes * c.ranks * c.threads << " flows in " << out;
    if (!c.overloaded_nodes.empty()) std::cout << "; " << c.overloaded_nodes.size() << " overloaded node(s)";
    if (!c.idle_nodes.empty()) std::cout << "; " << c.idle_nodes.size() << " node(s) half idle";
    if (!c.odd_nodes.empty()) std::cout << "; " << c.odd_nodes.size() << " odd node(s)";
    std::cout << "\n";
    return 0;
}
