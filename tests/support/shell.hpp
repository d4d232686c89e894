// Running a command line from a test: its exit code and everything it
// printed (stdout and stderr together), as a user at a terminal sees it.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace stacksage::testing {

struct Shell {
    int exit_code;       // -1 when it did not exit normally (or could not start)
    std::string output;  // stdout and stderr
};

inline Shell shell(const std::string& cmd) {
    FILE* pipe = popen((cmd + " 2>&1").c_str(), "r");
    if (!pipe) return {-1, "popen failed"};
    std::string out;
    std::array<char, 4096> buf{};
    while (std::size_t n = fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline bool is_executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// The program's path on PATH; "" when there is none.
inline std::string which(const std::string& program) {
    Shell s = shell("command -v " + program);
    if (s.exit_code != 0) return {};
    while (!s.output.empty() && (s.output.back() == '\n' || s.output.back() == ' ')) s.output.pop_back();
    return s.output;
}

}  // namespace stacksage::testing
