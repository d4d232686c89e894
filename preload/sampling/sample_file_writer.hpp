// Writes the raw sample file (core/formats/sample_file_format.hpp) in
// blocks: records collect in a buffer the caller provides and go out with one
// write(2) per block, so sampling costs no system call per sample and a
// killed process leaves whole blocks behind. Not thread-safe: one writer per
// process, behind the caller's lock.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/formats/sample_file_format.hpp"
#include "preload/kept_descriptor.hpp"

namespace stacksage::sampling {

class SampleFileWriter {
public:
    // Takes fd (closed by close()) and a buffer of buffer_bytes (at least
    // one block header and one record). Writes the file header at once.
    // \return false when the header cannot be written (the writer is then idle).
    bool open(int fd, void* buffer, std::size_t buffer_bytes, const SampleFileHeader& header);
    bool is_open() const { return fd_ >= 0; }

    void append(const SampleFileRecord& record) {
        if (fd_ < 0) return;
        if (count_ == capacity_) flush();
        records_[count_++] = record;
    }
    // Writes the pending block, if any. \return false on a write error (the
    // writer then stops: samples are not worth failing the application for).
    // A descriptor that no longer holds the file it opened (the application
    // closed it and got the number for a file of its own) counts as one: the
    // writer stops without touching the number.
    bool flush();
    // Flushes and closes.
    bool close();

    std::uint64_t records_written() const { return written_; }
    std::uint64_t write_errors() const { return errors_; }

private:
    int fd_ = -1;
    preload::FileIdentity file_;  // what fd_ was opened on
    SampleBlockHeader* block_ = nullptr;
    SampleFileRecord* records_ = nullptr;
    std::uint32_t capacity_ = 0, count_ = 0;
    std::uint64_t sequence_ = 0, written_ = 0, errors_ = 0;
};

}  // namespace stacksage::sampling
