// The input format of fuzz_run_directory, shared with fuzz_make_seeds: a run
// directory as one text the fuzzer can mutate.
//
// The input is split at marker lines: a line that is exactly "%%N" (N one
// digit 0-7) starts file N of the table below; the bytes up to the next
// marker line (its newline included) are the file's. Bytes before the first
// marker belong to file 1. A file named twice gets both parts, in order.
// Names are fixed, so no input can write outside the run directory.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace stacksage::fuzz {

inline constexpr std::array<std::string_view, 8> kRunFiles = {
    "run.json",                            // 0
    "n01/rank-0000.pid-100.jsonl",         // 1 an application process
    "n01/rank-0000.pid-100.samples.jsonl", // 2 its sampling summary
    "n01/pid-100.1.jsonl",                 // 3 another image of pid 100 (after exec)
    "n02/pid-200.jsonl",                   // 4 a process on a second host
    "n01/topology.xml",                    // 5 replaces the fixed topology of n01
    "n02/topology.xml",                    // 6 n02 has none otherwise (rebuilt from the cpusets)
    "n02/launcher.jsonl",                  // 7 a log without a pid in its name
};
inline constexpr int kFirstDefault = 1;

inline bool is_log(int file) { return file == 1 || file == 3 || file == 4 || file == 7; }

// Splits input into the files of kRunFiles; present[i] says whether file i
// was named (an empty file is still a file).
inline void split_run(std::string_view input, std::array<std::string, 8>& files, std::array<bool, 8>& present) {
    files = {};
    present = {};
    int current = kFirstDefault;
    bool named = false;  // the current part began with a marker
    std::size_t at = 0, part = 0;
    auto flush = [&](std::size_t end) {
        if (end == part && !named) return;  // no text before the first marker
        files[current].append(input.substr(part, end - part));
        present[current] = true;
    };
    while (at < input.size()) {
        std::size_t eol = input.find('\n', at);
        if (eol == std::string_view::npos) eol = input.size();
        const std::string_view line = input.substr(at, eol - at);
        if (line.size() == 3 && line[0] == '%' && line[1] == '%' && line[2] >= '0' && line[2] <= '7') {
            flush(at);
            current = line[2] - '0';
            named = true;
            part = eol < input.size() ? eol + 1 : eol;
        }
        at = eol + 1;
    }
    flush(input.size());
}

// The inverse, for writing seeds: file i under a marker when present. Only
// the last part of an input can end without a newline: an earlier file
// without one gets one.
inline std::string join_run(const std::array<std::string, 8>& files, const std::array<bool, 8>& present) {
    std::string out;
    for (std::size_t i = 0; i < files.size(); ++i) {
        if (!present[i]) continue;
        if (!out.empty() && out.back() != '\n') out += '\n';
        out += "%%" + std::to_string(i) + "\n" + files[i];
    }
    return out;
}

}  // namespace stacksage::fuzz
