// Latency buckets for sampled accesses: powers of two of the sample's
// weight (cycles for PEBS load latency and IBS miss latency).
//
// Bucket 0 holds weight 0 (no latency reported: stores on older Intel,
// software events); bucket i, 1 <= i < 15, holds [2^(i-1), 2^i); bucket 15
// holds 2^14 cycles and more. Files and reports carry the 16 counts in
// this order (docs/sample-file.md).
#pragma once

#include <cstdint>

namespace stacksage::sampling {

inline constexpr int kLatencyBuckets = 16;

constexpr int latency_bucket(std::uint64_t weight) {
    if (weight == 0) return 0;
    const int bits = 64 - __builtin_clzll(weight);  // 1 for weight 1, 2 for 2..3, ...
    return bits < kLatencyBuckets - 1 ? bits : kLatencyBuckets - 1;
}

// Smallest weight of a bucket (0, 1, 2, 4, ..., 16384).
constexpr std::uint64_t latency_bucket_floor(int bucket) {
    return bucket <= 0 ? 0 : std::uint64_t{1} << (bucket - 1);
}

}  // namespace stacksage::sampling
