// Helpers shared by the fuzz targets that hand files to readers which take
// a path: one fixed scratch directory per process under /tmp (the pid in its
// name, so that parallel fuzzers never share one), emptied for each input.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace stacksage::fuzz {

inline const std::filesystem::path& scratch_dir() {
    // Never destroyed: the exit handler below runs after static destructors
    // of objects constructed after it was registered.
    static const std::filesystem::path* dir = [] {
        auto* d = new std::filesystem::path(std::filesystem::temp_directory_path() /
                                            ("stacksage-fuzz-" + std::to_string(::getpid())));
        std::filesystem::remove_all(*d);
        std::filesystem::create_directories(*d);
        // Removed at exit; a crash leaves it behind (with the crashing files).
        std::atexit([] { std::error_code ec; std::filesystem::remove_all(scratch_dir(), ec); });
        return d;
    }();
    return *dir;
}

// Empties the scratch directory (cheaper than removing and recreating it).
inline void clear_scratch_dir() {
    for (const auto& entry : std::filesystem::directory_iterator(scratch_dir()))
        std::filesystem::remove_all(entry.path());
}

inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) std::abort();  // /tmp full: a broken fuzz run, not a finding
}

// True when an error message names the input (the file or the name given).
inline bool names(const std::string& message, const std::string& name) {
    return !message.empty() && message.find(name) != std::string::npos;
}

}  // namespace stacksage::fuzz
