#include "parsers/code_location/symbolizer.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>

#include <cstdlib>
#include <map>

namespace stacksage {

struct Symbolizer::Impl {
    const ProcessAddressSpace& space;
    ModuleFiles& files;
    char* debuginfo_path = nullptr;  // libdwfl's default places (.debug, /usr/lib/debug)
    Dwfl_Callbacks callbacks{};
    Dwfl* dwfl = nullptr;
    std::map<std::pair<const ModuleFile*, std::uint64_t>, Dwfl_Module*> reported;  // (file, bias)

    Impl(const ProcessAddressSpace& s, ModuleFiles& f) : space(s), files(f) {
        callbacks.find_elf = dwfl_build_id_find_elf;
        callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
        callbacks.section_address = dwfl_offline_section_address;
        callbacks.debuginfo_path = &debuginfo_path;
        dwfl = dwfl_begin(&callbacks);
    }
    ~Impl() {
        if (dwfl != nullptr) dwfl_end(dwfl);
    }

    // The file reported to libdwfl at bias, once; nullptr when libdwfl cannot read it.
    Dwfl_Module* module_of(const ModuleFile& file, std::uint64_t bias) {
        auto [it, fresh] = reported.try_emplace({&file, bias}, nullptr);
        if (fresh && dwfl != nullptr) {
            dwfl_report_begin_add(dwfl);
            const std::string name(base_name(file.path()));
            // add_p_vaddr: bias is added to the file's virtual addresses.
            it->second = dwfl_report_elf(dwfl, name.c_str(), file.path().c_str(), -1, bias, true);
            dwfl_report_end(dwfl, nullptr, nullptr);
        }
        return it->second;
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

CodeGap gap_of_kind(const SampledModule& m) {
    if (m.kind == "vdso") return CodeGap::Vdso;
    if (m.kind == "anon_exec" || (m.path.empty() && m.executable)) return CodeGap::AnonExec;
    if (m.kind == "unreadable") return CodeGap::UnreadableMapping;
    if (m.path.empty()) return CodeGap::NoModule;
    return CodeGap::None;
}

}  // namespace

Symbolizer::Symbolizer(const ProcessAddressSpace& space, ModuleFiles& files) : impl_(new Impl(space, files)) {}
Symbolizer::~Symbolizer() = default;

const CodeLocation& Symbolizer::code(std::uint64_t address, bool return_address) {
    const std::uint64_t looked_up = return_address && address > 0 ? address - 1 : address;
    auto& slot = cache_[looked_up << 1 | 1];
    if (!slot) {
        slot = std::make_unique<CodeLocation>(resolve(looked_up, true));
        slot->address = address;
        if (return_address) slot->offset += 1;  // the module offset of the address itself
    }
    return *slot;
}

const CodeLocation& Symbolizer::data(std::uint64_t address) {
    auto& slot = cache_[address << 1];
    if (!slot) slot = std::make_unique<CodeLocation>(resolve(address, false));
    return *slot;
}

CodeLocation Symbolizer::resolve(std::uint64_t address, bool code) {
    CodeLocation loc;
    loc.address = address;
    const std::optional<ModuleAddress> at = impl_->space.locate(address);
    if (!at) return loc;  // NoModule
    const SampledModule& mapping = *at->module;
    loc.offset = at->file_offset;
    loc.module = mapping.kind == "vdso" ? "[vdso]" : mapping.path.empty() ? "[anon]" : mapping.path;
    if (const CodeGap gap = gap_of_kind(mapping); gap != CodeGap::None) {
        loc.gap = gap;
        return loc;
    }
    const ModuleFile& file = *impl_->files.of(mapping);
    if (file.gap() != CodeGap::None) {
        loc.gap = file.gap();
        return loc;
    }
    const std::optional<std::uint64_t> bias = file.load_bias(mapping);
    Dwfl_Module* mod = bias ? impl_->module_of(file, *bias) : nullptr;
    if (mod == nullptr) {
        loc.gap = CodeGap::NoFile;
        return loc;
    }
    GElf_Off symbol_offset = 0;
    GElf_Sym symbol;
    if (const char* name = dwfl_module_addrinfo(mod, address, &symbol_offset, &symbol, nullptr, nullptr, nullptr))
        loc.function = demangled(name);
    if (code) {
        if (Dwfl_Line* line = dwfl_module_getsrc(mod, address)) {
            int number = 0;
            if (const char* source = dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr)) {
                loc.file = source;
                loc.line = number;
            }
        }
    }
    loc.gap = loc.function.empty() ? CodeGap::Stripped : (code && loc.line <= 0) ? CodeGap::NoLineInfo : CodeGap::None;
    return loc;
}

}  // namespace stacksage
