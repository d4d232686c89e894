// This process's file mappings as the module records of a sampling summary
// (ids from 0), read from /proc/self/maps: what the recorder's module
// records of a process give the post-run resolver, for tests and benchmarks
// that resolve their own addresses.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "parsers/code_location/module_file.hpp"
#include "parsers/sample_summary.hpp"

namespace stacksage::test {

// with_build_ids: read each file's build id (as the recorder records it);
// without, the records have none (the resolver then trusts the path).
inline std::vector<SampledModule> this_process_modules(bool with_build_ids = false) {
    std::vector<SampledModule> modules;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string range, perms, offset, dev, inode, path;
        in >> range >> perms >> offset >> dev >> inode;
        std::getline(in >> std::ws, path);
        if (path.empty() || path[0] != '/') continue;
        SampledModule m;
        m.id = static_cast<std::int64_t>(modules.size());
        m.path = path;
        m.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        m.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
        m.file_offset = std::stoull(offset, nullptr, 16);
        m.kind = "file";
        m.executable = perms.size() > 2 && perms[2] == 'x';
        if (with_build_ids)
            if (auto file = ModuleFile::open(path, "")) m.build_id = file->build_id();
        modules.push_back(m);
    }
    return modules;
}

}  // namespace stacksage::test
