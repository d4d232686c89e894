// Code and data addresses of one sampled process to functions and, where the
// module has debug information, source file and line: the address's mapping
// (ProcessAddressSpace), its file checked against the recorded build id
// (ModuleFiles), its symbols by the file's own addresses (ModuleSymbols,
// libdwfl, shared between processes); each address resolved once (cached).
// No program is run.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "parsers/code_location/code_location.hpp"
#include "parsers/code_location/module_file.hpp"
#include "parsers/code_location/module_symbols.hpp"
#include "parsers/code_location/process_address_space.hpp"

namespace stacksage {

class Symbolizer {
public:
    // space, files and tables must outlive the symbolizer.
    Symbolizer(const ProcessAddressSpace& space, ModuleFiles& files, ModuleSymbolTables& tables);

    // \return where address lies. return_address: it is a caller's return
    //         address, looked up one byte back so that a call at the end of a
    //         function or of a line is given its own. The reference is valid
    //         until the symbolizer is destroyed.
    const CodeLocation& code(std::uint64_t address, bool return_address = false);
    // \return the data symbol (a static variable) holding address: its name
    //         in location.function ("" where the module has no symbol for it).
    const CodeLocation& data(std::uint64_t address);

    std::size_t cached() const { return cache_.size(); }

private:
    const ProcessAddressSpace& space_;
    ModuleFiles& files_;
    ModuleSymbolTables& tables_;
    // Keyed by (looked-up address << 1 | 1 for code): user addresses leave the top bit free.
    std::unordered_map<std::uint64_t, std::unique_ptr<CodeLocation>> cache_;
    CodeLocation resolve(std::uint64_t address, bool code);
};

}  // namespace stacksage
