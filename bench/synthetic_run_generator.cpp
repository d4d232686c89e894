// stacksage_synthetic_run: writes a recorded run of any size, as the preload
// and `stacksage run` would (tests/support/synthetic_run.hpp), for the
// analyzer's benchmark (bench/analyzer_benchmark.sh).
//
//   stacksage_synthetic_run OUT --nodes 1024 --ranks 64 --threads 16 [--cores 64] [--bound]
//
// Every node gets the same topology (hwloc synthetic "pack:2 core:C/2 pu:1",
// with its own host name), every rank a log with its main thread and
// threads-1 OpenMP threads. --bound places each rank on its own core (the
// threads then over-subscribe it, as with `--bind-to core` and too many
// OMP threads); otherwise each rank may use the whole node.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "tests/support/synthetic_run.hpp"

using namespace stacksage::testing;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: stacksage_synthetic_run OUT [--nodes N] [--ranks R] [--threads T] [--cores C] [--bound]\n";
        return 2;
    }
    const std::string out = argv[1];
    long nodes = 16, ranks = 64, threads = 16, cores = 64;
    bool bound = false;
    for (int i = 2; i < argc; ++i) {
        const std::string a = argv[i];
        auto next = [&] { return i + 1 < argc ? std::atol(argv[++i]) : 0L; };
        if (a == "--nodes") nodes = next();
        else if (a == "--ranks") ranks = next();
        else if (a == "--threads") threads = next();
        else if (a == "--cores") cores = next();
        else if (a == "--bound") bound = true;
        else {
            std::cerr << "stacksage_synthetic_run: unknown option " << a << "\n";
            return 2;
        }
    }
    if (nodes < 1 || ranks < 1 || threads < 1 || cores < 2 || cores % 2 != 0) {
        std::cerr << "stacksage_synthetic_run: --nodes, --ranks, --threads >= 1 and an even --cores >= 2\n";
        return 2;
    }
    std::filesystem::remove_all(out);
    SyntheticRun run(out);
    run.write_run_json(fmt::format(R"(["mpirun","-np","{}","--bind-to","{}","./app"])", nodes * ranks,
                                   bound ? "core" : "none"));
    const std::string description = fmt::format("pack:2 core:{} pu:1", cores / 2);
    const std::string all = fmt::format("0-{}", cores - 1);
    for (long n = 0; n < nodes; ++n) {
        const std::string host = fmt::format("n{:04d}", n + 1);
        run.add_host(host, description);
        for (long r = 0; r < ranks; ++r) {
            const long rank = n * ranks + r;
            SyntheticProcess p = busy_process(host, 10000 + r, rank, static_cast<unsigned>(threads),
                                              bound ? std::to_string(r % cores) : all);
            p.identity["OMPI_COMM_WORLD_RANK"] = std::to_string(rank);
            p.env["OMP_NUM_THREADS"] = std::to_string(threads);
            run.add_process(p);
        }
    }
    std::cout << "stacksage_synthetic_run: " << nodes << " nodes x " << ranks << " ranks x " << threads
              << " threads = " << nodes * ranks * threads << " flows in " << out << "\n";
    return 0;
}
