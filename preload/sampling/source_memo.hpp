// Classifying a sample's data source once per distinct value.
//
// A program's samples carry few distinct perf_mem_data_src values (a few
// dozen: level x snoop x TLB bits), so the decoded classification is kept
// in a small direct-mapped table: draining then costs a compare and a load
// per sample instead of a decode (see bench/sampling_decode.cpp).
#pragma once

#include <cstdint>

#include "preload/sampling/access_table.hpp"

namespace stacksage::sampling {

enum class EventKind : std::uint8_t;

class SourceMemo {
public:
    // The packed AccessKey (AccessKey::pack) of a sample of this kind with
    // this data source, with cpu 0 and node unknown: OR in the CPU (bits
    // 0-19) and the node (with_node) to complete it.
    std::uint64_t key_bits(EventKind kind, std::uint64_t data_src) {
        Entry& e = entries_[slot(kind, data_src)];
        if (e.bits != 0 && e.data_src == data_src && e.kind == static_cast<std::uint8_t>(kind)) return e.bits;
        e.data_src = data_src;
        e.kind = static_cast<std::uint8_t>(kind);
        e.bits = classify(kind, data_src);
        return e.bits;
    }
    static std::uint64_t with_cpu(std::uint64_t bits, std::uint32_t cpu) { return bits | (cpu & 0xfffffu); }
    static std::uint64_t with_node(std::uint64_t packed, std::int32_t node) {
        return node < 0 ? packed : (packed & ~(std::uint64_t{0xfff} << 20)) | (std::uint64_t(node + 1) & 0xfff) << 20;
    }

private:
    static constexpr unsigned kEntries = 64;
    struct Entry {
        std::uint64_t data_src = 0;
        std::uint64_t bits = 0;  // 0: empty (a packed key always has bit 63)
        std::uint8_t kind = 0;
    };
    static unsigned slot(EventKind kind, std::uint64_t v) {
        const std::uint64_t h = (v ^ static_cast<std::uint64_t>(kind)) * 0x9E3779B97F4A7C15ull;
        return static_cast<unsigned>(h >> 58);  // top 6 bits: 64 entries
    }
    static std::uint64_t classify(EventKind kind, std::uint64_t data_src);
    Entry entries_[kEntries];
};

}  // namespace stacksage::sampling
