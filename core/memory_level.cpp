#include "core/memory_level.hpp"

#include "core/enum_words.hpp"

namespace stacksage {

namespace {

constexpr std::array<std::string_view, kMemoryLevelCount> kWords = {
    "L1",           "fill_buffer", "L2",   "L3",  "L4", "peer_cache", "memory_side_cache", "local_dram",
    "remote_cache", "remote_dram", "pmem", "cxl", "io", "uncached",   "unknown",
};

}  // namespace

std::string_view to_string(MemoryLevel level) { return word_of(kWords, level); }

std::optional<MemoryLevel> memory_level_from_string(std::string_view word) {
    return enum_of_word<MemoryLevel>(kWords, word);
}

bool is_cache_level(MemoryLevel level) {
    switch (level) {
        case MemoryLevel::L1:
        case MemoryLevel::FillBuffer:
        case MemoryLevel::L2:
        case MemoryLevel::L3:
        case MemoryLevel::L4:
        case MemoryLevel::PeerCache: return true;
        default: return false;
    }
}

}  // namespace stacksage
