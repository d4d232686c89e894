// The symbols and source lines of one module file, by ELF virtual address
// (independent of where a process mapped it), with elfutils' libdwfl: the
// file reported once (its separate debug file found by build id or
// .gnu_debuglink, as dwfl_standard_find_debuginfo does), each address
// resolved once. Shared by every process of a run that mapped the file: a
// thousand ranks of one program read its debug information once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>

#include "parsers/code_location/code_location.hpp"
#include "parsers/code_location/module_file.hpp"

namespace stacksage {

// What the module knows of an address: function, file and line, and the gap
// (None, NoLineInfo, Stripped; NoFile when libdwfl cannot read the file).
struct ModuleSymbol {
    std::string function, file;
    int line = 0;
    CodeGap gap = CodeGap::NoFile;
};

class ModuleSymbols {
public:
    explicit ModuleSymbols(const ModuleFile& file);  // file must outlive it
    ~ModuleSymbols();
    ModuleSymbols(const ModuleSymbols&) = delete;
    ModuleSymbols& operator=(const ModuleSymbols&) = delete;

    // \return the function holding code at vaddr, and its source line.
    const ModuleSymbol& code(std::uint64_t vaddr);
    // \return the data symbol (a static variable) holding vaddr; no line.
    const ModuleSymbol& data(std::uint64_t vaddr);

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
    // Keyed by (vaddr << 1 | 1 for code): user addresses leave the top bit free.
    std::unordered_map<std::uint64_t, ModuleSymbol> cache_;
};

// The ModuleSymbols of each module file, made on first use.
class ModuleSymbolTables {
public:
    ModuleSymbols& of(const ModuleFile& file);

private:
    std::map<const ModuleFile*, std::unique_ptr<ModuleSymbols>> tables_;
};

}  // namespace stacksage
