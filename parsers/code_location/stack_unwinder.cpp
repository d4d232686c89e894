#include "parsers/code_location/stack_unwinder.hpp"

#include <cstring>
#include <unordered_map>

#if defined(__x86_64__)
#include <libunwind.h>

// libunwind exports its search of a binary-search table (.eh_frame_hdr) for
// remote address spaces, without declaring it in its headers.
extern "C" int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t* di,
                                                  unw_proc_info_t* pi, int need_unwind_info, void* arg);
#endif

namespace stacksage {

std::string_view to_string(UnwindOutcome outcome) {
    switch (outcome) {
    case UnwindOutcome::Complete: return "complete";
    case UnwindOutcome::StackCopyEnd: return "stack_copy_end";
    case UnwindOutcome::NoUnwindInfo: return "no_unwind_info";
    case UnwindOutcome::StepFailed: return "step_failed";
    case UnwindOutcome::NoStack: return "no_stack";
    case UnwindOutcome::TooDeep: return "too_deep";
    case UnwindOutcome::Unsupported: return "unsupported";
    }
    return "step_failed";
}

bool is_unwind_failure(UnwindOutcome outcome) {
    return outcome != UnwindOutcome::Complete && outcome != UnwindOutcome::TooDeep;
}

#if defined(__x86_64__)

// A mapping's file and load bias, looked up once per mapping: the
// accessors read memory many times per frame.
struct MappedFile {
    const ModuleFile* file = nullptr;  // nullptr: not a usable file mapping
    std::uint64_t bias = 0;
};
using MappedFiles = std::unordered_map<const SampledModule*, MappedFile>;

// One unwind's state, handed to the accessors as their `arg`.
struct UnwindCall {
    const SampledSite* site = nullptr;
    const ProcessAddressSpace* space = nullptr;
    ModuleFiles* files = nullptr;
    MappedFiles* mapped = nullptr;
    bool read_above_copy = false;  // a read above sp fell outside the copy
    bool code_without_module = false;
};

namespace {

// The file and load bias of the mapping holding address; nullptr when it is
// not a usable file mapping.
const ModuleFile* file_at(UnwindCall& call, std::uint64_t address, const SampledModule** mapping,
                          std::uint64_t* bias) {
    const std::optional<ModuleAddress> at = call.space->locate(address);
    if (!at) return nullptr;
    auto [it, fresh] = call.mapped->try_emplace(at->module);
    if (fresh && at->module->kind == "file" && !at->module->path.empty()) {
        const ModuleFile* file = call.files->of(*at->module).get();
        const std::optional<std::uint64_t> b = file->load_bias(*at->module);
        if (file->gap() == CodeGap::None && b) it->second = MappedFile{file, *b};
    }
    *mapping = at->module;
    *bias = it->second.bias;
    return it->second.file;
}

int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t* pi, int need_unwind_info, void* arg) {
    auto& call = *static_cast<UnwindCall*>(arg);
    const SampledModule* mapping = nullptr;
    std::uint64_t bias = 0;
    const ModuleFile* file = file_at(call, ip, &mapping, &bias);
    if (file == nullptr) {
        call.code_without_module = true;
        return -UNW_ENOINFO;
    }
    const auto& hdr = file->eh_frame_hdr();
    if (!hdr) return -UNW_ENOINFO;
    unw_dyn_info_t di;
    std::memset(&di, 0, sizeof di);
    di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di.start_ip = mapping->start;
    di.end_ip = mapping->end;
    di.u.rti.segbase = bias + hdr->vaddr;
    di.u.rti.table_data = bias + hdr->table_vaddr;
    // The table holds pairs of 4-byte entries; its length is in words.
    di.u.rti.table_len = hdr->fde_count * 8 / sizeof(unw_word_t);
    return _Ux86_64_dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

void put_unwind_info(unw_addr_space_t, unw_proc_info_t*, void*) {}

int get_dyn_info_list_addr(unw_addr_space_t, unw_word_t*, void*) { return -UNW_ENOINFO; }

int access_mem(unw_addr_space_t, unw_word_t addr, unw_word_t* value, int write, void* arg) {
    if (write) return -UNW_EREADONLYREG;
    auto& call = *static_cast<UnwindCall*>(arg);
    const SampledSite& site = *call.site;
    const std::uint64_t sp = site.reg_sp, copied = site.stack.size();
    if (addr >= sp && addr - sp <= copied && copied - (addr - sp) >= sizeof *value) {
        std::memcpy(value, site.stack.data() + (addr - sp), sizeof *value);
        return 0;
    }
    const SampledModule* mapping = nullptr;
    std::uint64_t bias = 0;
    if (const ModuleFile* file = file_at(call, addr, &mapping, &bias);
        file != nullptr && file->read(addr - bias, value, sizeof *value))
        return 0;
    if (addr >= sp) call.read_above_copy = true;
    return -UNW_EINVAL;
}

int access_reg(unw_addr_space_t, unw_regnum_t reg, unw_word_t* value, int write, void* arg) {
    if (write) return -UNW_EREADONLYREG;
    const SampledSite& site = *static_cast<UnwindCall*>(arg)->site;
    switch (reg) {
    case UNW_X86_64_RIP: *value = site.reg_ip; return 0;
    case UNW_X86_64_RSP: *value = site.reg_sp; return 0;
    case UNW_X86_64_RBP: *value = site.reg_bp; return 0;
    default: return -UNW_EBADREG;  // the recorder keeps ip, sp and bp only
    }
}

int access_fpreg(unw_addr_space_t, unw_regnum_t, unw_fpreg_t*, int, void*) { return -UNW_EBADREG; }
int resume(unw_addr_space_t, unw_cursor_t*, void*) { return -UNW_EINVAL; }
int get_proc_name(unw_addr_space_t, unw_word_t, char*, size_t, unw_word_t*, void*) { return -UNW_EINVAL; }

unw_accessors_t accessors = {find_proc_info, put_unwind_info, get_dyn_info_list_addr, access_mem,
                             access_reg,     access_fpreg,    resume,                 get_proc_name};

}  // namespace

struct StackUnwinder::Impl {
    const ProcessAddressSpace& space;
    ModuleFiles& files;
    unw_addr_space_t as = nullptr;
    MappedFiles mapped;
};

StackUnwinder::StackUnwinder(const ProcessAddressSpace& space, ModuleFiles& files)
    : impl_(new Impl{space, files, unw_create_addr_space(&accessors, 0), {}}) {
    // The mappings do not change within one process's address space: what
    // libunwind learns of a function's unwind rules holds for every site
    // (without the cache an unwind is ten times slower). Per address space,
    // not per thread: libunwind's per-thread cache is shared by every address
    // space the thread unwinds, and two processes' modules may share addresses.
    if (impl_->as != nullptr) unw_set_caching_policy(impl_->as, UNW_CACHE_GLOBAL);
}

StackUnwinder::~StackUnwinder() {
    if (impl_->as != nullptr) unw_destroy_addr_space(impl_->as);
}

UnwoundStack StackUnwinder::unwind(const SampledSite& site, std::size_t max_frames) {
    UnwoundStack out;
    if (site.stack.empty() || site.reg_sp == 0 || site.reg_ip == 0) return out;  // NoStack
    if (impl_->as == nullptr) {
        out.outcome = UnwindOutcome::StepFailed;
        return out;
    }
    UnwindCall call{&site, &impl_->space, &impl_->files, &impl_->mapped};
    unw_cursor_t cursor;
    if (unw_init_remote(&cursor, impl_->as, &call) < 0) {
        out.outcome = UnwindOutcome::StepFailed;
        return out;
    }
    out.frames.push_back(site.reg_ip);
    for (;;) {
        if (out.frames.size() >= max_frames) {
            out.outcome = UnwindOutcome::TooDeep;
            return out;
        }
        call.read_above_copy = call.code_without_module = false;  // what this step met
        const int step = unw_step(&cursor);
        unw_word_t ip = 0;
        if (step > 0 && unw_get_reg(&cursor, UNW_REG_IP, &ip) == 0 && ip != 0) {
            out.frames.push_back(ip);
            continue;
        }
        if (call.read_above_copy) out.outcome = UnwindOutcome::StackCopyEnd;
        else if (step >= 0) out.outcome = UnwindOutcome::Complete;
        else if (call.code_without_module) out.outcome = UnwindOutcome::NoUnwindInfo;
        else out.outcome = UnwindOutcome::StepFailed;
        return out;
    }
}

#else  // not x86-64

struct StackUnwinder::Impl {};
StackUnwinder::StackUnwinder(const ProcessAddressSpace&, ModuleFiles&) : impl_(new Impl) {}
StackUnwinder::~StackUnwinder() = default;
UnwoundStack StackUnwinder::unwind(const SampledSite& site, std::size_t) {
    UnwoundStack out;
    out.outcome = site.stack.empty() ? UnwindOutcome::NoStack : UnwindOutcome::Unsupported;
    return out;
}

#endif

}  // namespace stacksage
