// A note about the input of an analysis: a file that was torn, skipped,
// altered or missing, and what was done about it. The loaders write them
// (parsers/run_loader.hpp); the reports print them, so the type lives below
// both.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stacksage {

struct LoadNote {
    enum class Level : std::uint8_t { Info, Warning, Error };
    Level level = Level::Info;
    std::string file;     // the file concerned (relative to OUT), or "" for the run
    std::string message;  // complete sentence(s), naming what was done about it
};

// "info", "warning", "error": as the reports write the level.
constexpr std::string_view to_string(LoadNote::Level level) {
    switch (level) {
        case LoadNote::Level::Info: return "info";
        case LoadNote::Level::Warning: return "warning";
        case LoadNote::Level::Error: return "error";
    }
    return "?";
}

}  // namespace stacksage
