// Reading the raw sample file (<log stem>.samples.bin, format in
// docs/sample-file.md and core/formats/sample_file_format.hpp).
//
// A process killed mid-write leaves a partial last block: whole blocks are
// read, a partial one is reported (partial_block) and its whole records kept.
#pragma once

#include <string>
#include <vector>

#include "core/formats/sample_file_format.hpp"
#include "core/result.hpp"

namespace stacksage {

struct RawSampleFile {
    sampling::SampleFileHeader header{};
    std::vector<sampling::SampleFileRecord> records;
    std::size_t blocks = 0;
    bool partial_block = false;  // the file ends inside a block (the writer was killed)
};

// \return the records.
// \return an Error "<path>: <why>" when the file cannot be read, is not a
//         stacksage sample file, has a newer version, records of another
//         size, or a damaged block header before the end.
Result<RawSampleFile> read_raw_sample_file(const std::string& path);

}  // namespace stacksage
