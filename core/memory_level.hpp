// Where a sampled memory access was served from: the words the sampler
// writes (parsers/sample_summary.hpp) and MemoryAccess paths carry
// (memory_access_keys::level in run_model_schema.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace stacksage {

// Nearest first: the order in which reports list the levels.
enum class MemoryLevel : std::uint8_t {
    L1,
    FillBuffer,       // "fill_buffer": a line on its way into L1
    L2,
    L3,
    L4,
    PeerCache,        // another core's cache on the same node
    MemorySideCache,  // a cache in front of a NUMA node's memory (MCDRAM as cache)
    LocalDram,
    RemoteCache,      // a cache of another node or socket
    RemoteDram,
    Pmem,
    Cxl,
    Io,
    Uncached,
    Unknown,
};
inline constexpr std::size_t kMemoryLevelCount = 15;

// "L1", "fill_buffer", "L2", "L3", "L4", "peer_cache", "memory_side_cache",
// "local_dram", "remote_cache", "remote_dram", "pmem", "cxl", "io",
// "uncached", "unknown".
std::string_view to_string(MemoryLevel level);
// \return the level whose word is `word`; nullopt for any other word.
std::optional<MemoryLevel> memory_level_from_string(std::string_view word);

// A cache of the issuing core or its neighbours: L1 (and its fill buffer),
// L2, L3, L4 and a peer core's cache.
bool is_cache_level(MemoryLevel level);

}  // namespace stacksage
