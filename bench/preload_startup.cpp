// Start-up cost of the recorder: from its constructor to the application's
// main, with and without the node's topology being written (the first
// process on a host writes it), and the whole spawn-to-exit time of a
// trivial program with and without the preload.
//
// Usage: preload_startup PRELOAD.so STARTUP_CLOCK [RUNS]
// STARTUP_CLOCK is examples/startup_clock, which prints CLOCK_MONOTONIC at
// main; the recorder's process_start line holds the constructor's time.
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bench/preload_bench_support.hpp"
#include "parsers/node_file_reader.hpp"

using namespace stacksage::bench;

namespace {

// Constructor-to-main in microseconds, from the run's log (the first stream
// of its node.events, or a .jsonl of the earlier layout) and stdout.
double constructor_to_main_us(const fs::path& out, const std::string& stdout_text) {
    for (const auto& host : fs::directory_iterator(out))
        for (const auto& f : fs::directory_iterator(host.path())) {
            std::string first;
            if (f.path().filename() == "node.events") {
                auto node = stacksage::read_node_file(f.path().string(), "node.events",
                                                      stacksage::formats::node_file::FileKind::events);
                if (!node || node->streams.empty()) continue;
                const std::string_view text = node->streams.front().text;
                first = std::string(text.substr(0, text.find('\n')));
            } else if (f.path().extension() == ".jsonl") {
                std::ifstream in(f.path());
                std::getline(in, first);
            } else {
                continue;
            }
            auto start = nlohmann::json::parse(first);
            double main_ns = std::stod(stdout_text);
            return (main_ns - start["monotonic_ns"].get<double>()) / 1000.0;
        }
    throw std::runtime_error("no event log in " + out.string());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PRELOAD.so STARTUP_CLOCK [RUNS]\n", argv[0]);
        return 2;
    }
    const std::string preload = fs::absolute(argv[1]).string();
    const std::vector<std::string> program = {fs::absolute(argv[2]).string()};
    const int runs = argc > 3 ? std::atoi(argv[3]) : 100;

    // A directory whose host already has its topology: later processes of a job.
    fs::path warm = fresh_directory("startup-warm");
    run_child(program, {{"LD_PRELOAD", preload}, {"STACKSAGE_OUTPUT", warm.string()}}, true);

    std::vector<double> plain_ms, warm_ms, cold_ms, warm_us, cold_us;
    for (int i = 0; i < runs; ++i) {
        plain_ms.push_back(run_child(program, {}, true).seconds * 1000);

        fs::path dir = fresh_directory("startup-run");
        // Reuse the host directory that already has topology.xml.
        for (const auto& host : fs::directory_iterator(warm))
            if (host.is_directory()) {
                fs::create_directory(dir / host.path().filename());
                fs::copy_file(host.path() / "topology.xml", dir / host.path().filename() / "topology.xml");
            }
        ChildRun w = run_child(program, {{"LD_PRELOAD", preload}, {"STACKSAGE_OUTPUT", dir.string()}}, true);
        warm_ms.push_back(w.seconds * 1000);
        warm_us.push_back(constructor_to_main_us(dir, w.out));
        fs::remove_all(dir);

        fs::path cold = fresh_directory("startup-cold");
        ChildRun c = run_child(program, {{"LD_PRELOAD", preload}, {"STACKSAGE_OUTPUT", cold.string()}}, true);
        cold_ms.push_back(c.seconds * 1000);
        cold_us.push_back(constructor_to_main_us(cold, c.out));
        fs::remove_all(cold);
    }
    fs::remove_all(warm);
    std::printf("runs: %d (medians)\n", runs);
    std::printf("constructor to main, topology already written: %8.1f us\n", median(warm_us));
    std::printf("constructor to main, writing the topology:     %8.1f us\n", median(cold_us));
    std::printf("spawn to exit, untraced:                       %8.2f ms\n", median(plain_ms));
    std::printf("spawn to exit, traced, topology present:       %8.2f ms\n", median(warm_ms));
    std::printf("spawn to exit, traced, writing the topology:   %8.2f ms\n", median(cold_ms));
    return 0;
}
