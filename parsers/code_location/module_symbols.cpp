#include "parsers/code_location/module_symbols.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>

namespace stacksage {

struct ModuleSymbols::Impl {
    char* debuginfo_path = nullptr;  // libdwfl's default places (.debug, /usr/lib/debug)
    Dwfl_Callbacks callbacks{};
    Dwfl* dwfl = nullptr;
    Dwfl_Module* module = nullptr;

    explicit Impl(const ModuleFile& file) {
        callbacks.find_elf = dwfl_build_id_find_elf;
        callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
        callbacks.section_address = dwfl_offline_section_address;
        callbacks.debuginfo_path = &debuginfo_path;
        dwfl = dwfl_begin(&callbacks);
        if (dwfl == nullptr) return;
        dwfl_report_begin(dwfl);
        const std::string name(base_name(file.path()));
        // Placed at bias 0 (add_p_vaddr): its addresses are the file's own.
        module = dwfl_report_elf(dwfl, name.c_str(), file.path().c_str(), -1, 0, true);
        dwfl_report_end(dwfl, nullptr, nullptr);
    }
    ~Impl() {
        if (dwfl != nullptr) dwfl_end(dwfl);
    }
};

namespace {

std::string demangled(const char* name) {
    int status = 0;
    char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || plain == nullptr) return name;
    std::string out(plain);
    std::free(plain);
    return out;
}

// The demangled name of the symbol that holds vaddr; empty where none does.
std::string symbol_at(Dwfl_Module* module, std::uint64_t vaddr) {
    GElf_Off offset = 0;
    GElf_Sym symbol;
    const char* name = dwfl_module_addrinfo(module, vaddr, &offset, &symbol, nullptr, nullptr, nullptr);
    return name != nullptr ? demangled(name) : std::string();
}

}  // namespace

ModuleSymbols::ModuleSymbols(const ModuleFile& file) : impl_(new Impl(file)) {}
ModuleSymbols::~ModuleSymbols() = default;

const ModuleSymbol& ModuleSymbols::code(std::uint64_t vaddr) {
    auto [it, fresh] = cache_.try_emplace(vaddr << 1 | 1);
    if (!fresh || impl_->module == nullptr) return it->second;
    ModuleSymbol& s = it->second;
    s.function = symbol_at(impl_->module, vaddr);
    if (Dwfl_Line* line = dwfl_module_getsrc(impl_->module, vaddr)) {
        int number = 0;
        if (const char* source = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr)) {
            s.file = source;
            s.line = number;
        }
    }
    s.gap = s.function.empty() ? CodeGap::Stripped : s.line <= 0 ? CodeGap::NoLineInfo : CodeGap::None;
    return s;
}

const ModuleSymbol& ModuleSymbols::data(std::uint64_t vaddr) {
    auto [it, fresh] = cache_.try_emplace(vaddr << 1);
    if (!fresh || impl_->module == nullptr) return it->second;
    ModuleSymbol& s = it->second;
    s.function = symbol_at(impl_->module, vaddr);
    s.gap = s.function.empty() ? CodeGap::Stripped : CodeGap::None;
    return s;
}

ModuleSymbols& ModuleSymbolTables::of(const ModuleFile& file) {
    auto& slot = tables_[&file];
    if (!slot) slot = std::make_unique<ModuleSymbols>(file);
    return *slot;
}

}  // namespace stacksage
