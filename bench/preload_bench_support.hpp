// Running a program as a child process for the preload benchmarks, with or
// without the recorder, and timing it from spawn to exit.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace stacksage::bench {

namespace fs = std::filesystem;

struct ChildRun {
    double seconds = 0;
    std::string out;  // stdout, when captured
    // CPU time (user + system) of the child and of the descendants it waited
    // for (an MPI launcher's ranks), its minor page faults, and how often the
    // scheduler took a CPU from it (wait4's accounting).
    double cpu_seconds = 0;
    long minor_faults = 0, preemptions = 0;
};

// Runs argv with the current environment plus `set` (minus LD_PRELOAD unless
// it is in `set`); stdout captured when capture is true, otherwise discarded.
inline ChildRun run_child(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& set, bool capture = false) {
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e)
        if (const char* eq = std::strchr(*e, '='))
            env[std::string(*e, static_cast<std::size_t>(eq - *e))] = eq + 1;
    env.erase("LD_PRELOAD");
    env.erase("STACKSAGE_OUTPUT");
    for (const auto& [k, v] : set) env[k] = v;
    std::vector<std::string> strings;
    for (const auto& [k, v] : env) strings.push_back(k + "=" + v);
    std::vector<char*> envp, args;
    for (auto& s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_copy = argv;
    for (auto& a : argv_copy) args.push_back(a.data());
    args.push_back(nullptr);

    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (capture)
        posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    else
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);

    ChildRun result;
    auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp.data()) != 0)
        throw std::runtime_error("cannot run " + argv[0]);
    ::close(pipe_fds[1]);
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) result.out.append(buf, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    rusage usage{};
    ::wait4(pid, &status, 0, &usage);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
    result.minor_faults = usage.ru_minflt;
    result.preemptions = usage.ru_nivcsw;
    posix_spawn_file_actions_destroy(&actions);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw std::runtime_error(argv[0] + " failed (status " + std::to_string(status) + ")");
    return result;
}

inline fs::path fresh_directory(const char* tag) {
    std::string templ = (fs::temp_directory_path() / (std::string("stacksage-") + tag + "-XXXXXX")).string();
    if (::mkdtemp(templ.data()) == nullptr) throw std::runtime_error("mkdtemp");
    return templ;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return 0;
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace stacksage::bench
