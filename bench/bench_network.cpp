// The job on the network at scale: read a 10,000-host fabric (the ports
// report of a 3-level fat tree of radix 36, as ibnetdiscover -p prints it),
// join a job of every one of its hosts by name, and compute the footprint
// (leaf switches, the hop histogram of its 50 million pairs, what the paths
// cross). The target: at most 1 s for the three together
// (docs/PERFORMANCE.md, "The job on the network").
//
//   bench_network [hosts] [rounds]
//
// Prints each stage's best time over the rounds, and, side by side, a
// breadth-first search from every host (what a per-pair computation costs,
// timed on 200 sources and scaled), with their ratio. Exits 1 when read +
// join + footprint take over 1 s.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <queue>
#include <unistd.h>

#include "analysis/fabric_join.hpp"
#include "analysis/network_footprint.hpp"
#include "parsers/fabric_loader.hpp"
#include "tests/support/fat_tree.hpp"

using namespace stacksage;
namespace fs = std::filesystem;

namespace {
double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

int main(int argc, char** argv) {
    const std::size_t hosts = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 10000;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 5;
    const auto tree = stacksage::testing::three_level_fat_tree(hosts, 36);
    const fs::path file = fs::temp_directory_path() / ("bench-network-" + std::to_string(::getpid()) + ".txt");
    std::ofstream(file) << tree.ports_report;
    std::vector<HostFabricIds> job;
    for (const std::string& h : tree.host_names) job.push_back(HostFabricIds{h, {}, {}});

    double best_read = 1e9, best_join = 1e9, best_footprint = 1e9, best_total = 1e9;
    std::uint64_t pairs = 0;
    for (int r = 0; r < rounds; ++r) {
        const double t0 = now();
        Result<LoadedFabric> loaded = load_fabric(file.string());
        if (!loaded) {
            std::fprintf(stderr, "%s\n", loaded.error().message.c_str());
            return 2;
        }
        const double t1 = now();
        const FabricJoin join = join_hosts(loaded->fabric, job, {});
        const double t2 = now();
        const NetworkFootprint fp = compute_network_footprint(loaded->fabric, join);
        const double t3 = now();
        pairs = fp.pairs();
        best_read = std::min(best_read, t1 - t0);
        best_join = std::min(best_join, t2 - t1);
        best_footprint = std::min(best_footprint, t3 - t2);
        best_total = std::min(best_total, t3 - t0);
    }
    fs::remove(file);

    // Side by side: one search per host over the whole graph (hosts do not forward).
    std::vector<std::vector<std::uint32_t>> adj(tree.names.size());
    for (auto [a, b] : tree.cables) {
        adj[a].push_back(b);
        adj[b].push_back(a);
    }
    const std::size_t sources = std::min<std::size_t>(200, tree.hosts.size());
    const double s0 = now();
    std::vector<int> d(tree.names.size());
    std::uint64_t checksum = 0;
    for (std::size_t i = 0; i < sources; ++i) {
        std::fill(d.begin(), d.end(), -1);
        std::queue<std::uint32_t> q;
        d[tree.hosts[i]] = 0;
        q.push(tree.hosts[i]);
        while (!q.empty()) {
            const std::uint32_t v = q.front();
            q.pop();
            if (v != tree.hosts[i] && !tree.is_switch[v]) continue;
            for (std::uint32_t w : adj[v])
                if (d[w] < 0) {
                    d[w] = d[v] + 1;
                    q.push(w);
                }
        }
        checksum += static_cast<std::uint64_t>(d[tree.hosts.back()]);
    }
    const double per_host = (now() - s0) / static_cast<double>(sources) * static_cast<double>(tree.hosts.size());

    std::printf("fabric: %zu hosts, %zu cables, %zu bytes of ports report; job: all %zu hosts, %llu pairs\n",
                tree.hosts.size(), tree.cables.size(), tree.ports_report.size(), job.size(),
                static_cast<unsigned long long>(pairs));
    std::printf("read %.3f s, join %.3f s, footprint %.3f s: total %.3f s (best of %d; target 1 s)\n", best_read,
                best_join, best_footprint, best_total, rounds);
    std::printf("one search per host instead of the footprint: %.3f s (scaled from %zu; checksum %llu): %.1fx the "
                "footprint\n",
                per_host, sources, static_cast<unsigned long long>(checksum), per_host / best_footprint);
    return best_total <= 1.0 ? 0 : 1;
}
