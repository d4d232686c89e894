// Model snapshots: a model as one binary image that any process maps at any
// address and queries in place.
//
// The image is the model's own arrays (they hold ids, never pointers) behind
// a self-describing header: magic, format version, byte order, record sizes,
// a section table and a checksum of everything after the header. Opening maps
// the file read-only and points the model's arrays into the mapping: no
// per-object rebuild. The first change to such a model copies it into memory
// of its own (the file is never written through a mapping).
#pragma once

#include <cstdint>
#include <string>

#include "core/model.hpp"
#include "core/result.hpp"

namespace stacksage {

inline constexpr std::uint32_t kSnapshotVersion = 2;

// Writes the model's image to path atomically: to a temporary name in the
// same directory, then rename(2), so a reader sees the old file or the whole
// new one, never a part.
// \return Ok, or an Error naming the file and the system error.
Status write_snapshot(const Model& model, const std::string& path);

// Maps the image at path read-only and returns a model that uses it in place.
// \return the model, or an Error naming the file and why it is refused: not
//         found, not a snapshot (magic), another format version, another
//         byte order, truncated, checksum mismatch, or inconsistent contents.
//         A refused file is never partly read as a model.
Result<Model> open_snapshot(const std::string& path);

// The same checks on an image in memory; the model copies what it needs, so
// the bytes need not outlive it. `what` names the image in error messages.
Result<Model> read_snapshot_bytes(const void* data, std::size_t size, const std::string& what);

// The image bytes, as write_snapshot would write them.
std::string snapshot_bytes(const Model& model);

namespace detail {
// Recomputes and stores the checksum of an image in place (when it is long
// enough to have a header). For the fuzzer, which must get past the checksum
// to explore what lies behind it; never used to accept a damaged file.
void fix_snapshot_checksum(void* image, std::size_t size);
}  // namespace detail

}  // namespace stacksage
