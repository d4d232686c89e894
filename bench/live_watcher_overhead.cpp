// The live watcher's cost on a real job: `stacksage run --live=off` and
// `--live=on` on one command, spawn to exit, in alternating order, as paired
// ratios (on / off - 1). Every run records into a fresh directory, so each
// pays the same start (the topology, the logs, the node registry).
//
// Usage: bench_live_watcher_overhead PAIRS COMMAND...
//   e.g. OMP_NUM_THREADS=1 bench_live_watcher_overhead 10
//          mpirun --allow-run-as-root --oversubscribe -np 2 build/examples/mpi_omp --rounds 3000
// Goal (issue 29): the paired median at most +0.5 %. Figures: docs/PERFORMANCE.md,
// "Live warnings".
//
// Wall-time ratios on a shared machine wander by several per cent from run
// to run; so one more --live=on run is watched from outside: every 100 ms
// the CPU time of each "stacksage-live" thread of the job's processes is
// read from /proc (schedstat, in ns), and its last reading, summed, is set against the CPU
// time of the whole job (wait4's rusage): the watcher's own share, free of
// the machine's noise.
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "bench/preload_bench_support.hpp"

using namespace stacksage::bench;

namespace {

// Fields of /proc/.../stat after the comm: [0] is the state (field 3).
std::vector<std::string> stat_fields(const fs::path& file, std::string* comm = nullptr) {
    std::ifstream in(file);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto open = text.find('('), close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos) return {};
    if (comm) *comm = text.substr(open + 1, close - open - 1);
    std::istringstream rest(text.substr(close + 1));
    std::vector<std::string> fields;
    for (std::string f; rest >> f;) fields.push_back(f);
    return fields;
}

bool descends_from(long pid, long ancestor) {
    for (int depth = 0; depth < 8 && pid > 1; ++depth) {
        if (pid == ancestor) return true;
        const auto f = stat_fields("/proc/" + std::to_string(pid) + "/stat");
        if (f.size() < 2) return false;
        pid = std::stol(f[1]);
    }
    return pid == ancestor;
}

// One --live=on run of argv, watched: the watcher threads' CPU seconds and the job's.
std::pair<double, double> watched_run(const std::vector<std::string>& argv) {
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    const pid_t child = ::fork();
    if (child == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, 1);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    std::map<long, double> watcher_seconds;  // by tid: the last reading
    struct rusage usage{};
    int status = 0;
    while (::wait4(child, &status, WNOHANG, &usage) == 0) {
        std::error_code ec;
        for (const auto& proc : fs::directory_iterator("/proc", ec)) {
            const std::string name = proc.path().filename().string();
            if (name.empty() || name[0] < '0' || name[0] > '9' || !descends_from(std::stol(name), child)) continue;
            for (const auto& task : fs::directory_iterator(proc.path() / "task", ec)) {
                std::string comm;
                if (stat_fields(task.path() / "stat", &comm).empty() || comm != "stacksage-live") continue;
                // schedstat's first field: ns on a CPU (stat's ticks are 10 ms).
                std::ifstream schedstat(task.path() / "schedstat");
                long long ns = -1;
                if (schedstat >> ns && ns >= 0)
                    watcher_seconds[std::stol(task.path().filename().string())] = static_cast<double>(ns) / 1e9;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    double watcher = 0;
    for (const auto& [tid, s] : watcher_seconds) watcher += s;
    const double job = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    return {watcher, job};
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s PAIRS COMMAND...\n", argv[0]);
        return 2;
    }
    const int pairs = std::atoi(argv[1]);
    if (pairs < 1) {
        std::fprintf(stderr, "%s: PAIRS must be at least 1 (got '%s')\n", argv[0], argv[1]);
        return 2;
    }
    const std::vector<std::string> command(argv + 2, argv + argc);
    const fs::path root = fresh_directory("live-bench");
    int serial = 0;
    auto command_line = [&](bool live) {
        std::vector<std::string> argv = {STACKSAGE_CLI, "run", "-q", live ? "--live=on" : "--live=off", "-o",
                                         (root / ("run-" + std::to_string(serial++))).string(), "--"};
        argv.insert(argv.end(), command.begin(), command.end());
        return argv;
    };
    auto run = [&](bool live) { return run_child(command_line(live), {}).seconds; };
    run(false);  // the page cache
    run(true);
    std::vector<double> off, on, ratios;
    for (int i = 0; i < pairs; ++i) {
        double t_off, t_on;
        if (i % 2 == 0) {
            t_off = run(false);
            t_on = run(true);
        } else {
            t_on = run(true);
            t_off = run(false);
        }
        off.push_back(t_off);
        on.push_back(t_on);
        ratios.push_back(t_on / t_off - 1);
        std::printf("pair %2d: off %.3f s, on %.3f s, %+.2f %%\n", i + 1, t_off, t_on, ratios.back() * 100);
        std::fflush(stdout);
    }
    const auto [watcher, job] = watched_run(command_line(true));
    fs::remove_all(root);
    std::printf("pairs: %d\n", pairs);
    std::printf("--live=off: median %.3f s\n", median(off));
    std::printf("--live=on:  median %.3f s\n", median(on));
    std::printf("on / off - 1, paired: median %+.2f %%\n", median(ratios) * 100);
    std::printf("one watched --live=on run: watcher threads %.3f CPU s of the job's %.3f CPU s: %.3f %%\n", watcher,
                job, job > 0 ? watcher / job * 100 : 0.0);
    return 0;
}
