#include "parsers/code_location/symbolizer.hpp"

namespace stacksage {

namespace {

CodeGap gap_of_kind(const SampledModule& m) {
    if (m.kind == "vdso") return CodeGap::Vdso;
    if (m.kind == "anon_exec" || (m.path.empty() && m.executable)) return CodeGap::AnonExec;
    if (m.kind == "unreadable") return CodeGap::UnreadableMapping;
    if (m.path.empty()) return CodeGap::NoModule;
    return CodeGap::None;
}

}  // namespace

Symbolizer::Symbolizer(const ProcessAddressSpace& space, ModuleFiles& files, ModuleSymbolTables& tables)
    : space_(space), files_(files), tables_(tables) {}

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
    const std::optional<ModuleAddress> at = space_.locate(address);
    if (!at) return loc;  // NoModule
    const SampledModule& mapping = *at->module;
    loc.offset = at->file_offset;
    loc.module = mapping.kind == "vdso" ? "[vdso]" : mapping.path.empty() ? "[anon]" : mapping.path;
    if (const CodeGap gap = gap_of_kind(mapping); gap != CodeGap::None) {
        loc.gap = gap;
        return loc;
    }
    const ModuleFile& file = *files_.of(mapping);
    if (file.gap() != CodeGap::None) {
        loc.gap = file.gap();
        return loc;
    }
    const std::optional<std::uint64_t> bias = file.load_bias(mapping);
    if (!bias) {
        loc.gap = CodeGap::NoFile;
        return loc;
    }
    ModuleSymbols& symbols = tables_.of(file);
    const ModuleSymbol& s = code ? symbols.code(address - *bias) : symbols.data(address - *bias);
    loc.function = s.function;
    loc.file = s.file;
    loc.line = s.line;
    loc.gap = s.gap;
    return loc;
}

}  // namespace stacksage
