// Writes the process's sampling summary, <log stem>.samples.jsonl: the
// backends and why each did or did not run, then per thread its losses and
// its aggregated accesses, "ran on" counts and PAPI counts. The format is
// documented in docs/sample-file.md and read by parsers/sample_summary.hpp.
#pragma once

#include <cstddef>

#include "core/formats/sample_summary_schema.hpp"
#include "preload/sampling/process_sampler.hpp"

namespace stacksage::sampling {

inline constexpr int kSampleSummaryVersion = sample_summary_schema::kVersion;

// Writes from the process sampler's state (process_sampler.hpp) to path,
// which must not exist (O_EXCL: an existing file is never overwritten).
// \return false with a message in error.
bool write_sample_summary(const char* path, const SamplerConfig& config, char* error, std::size_t error_cap);

}  // namespace stacksage::sampling
