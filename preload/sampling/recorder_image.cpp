#include "preload/sampling/recorder_image.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>

namespace stacksage::sampling {

namespace {

struct Search {
    std::uintptr_t base;
    AddressRange found;
    bool main_program = false;  // the module found is the executable itself
};

int visit(struct dl_phdr_info* info, std::size_t, void* data) {
    auto& search = *static_cast<Search*>(data);
    // The main program has dlpi_addr 0 for non-PIE executables; dladdr's
    // dli_fbase is then its lowest segment, which the segments below cover.
    std::uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD) continue;
        const std::uint64_t start = info->dlpi_addr + ph.p_vaddr;
        lo = start < lo ? start : lo;
        hi = start + ph.p_memsz > hi ? start + ph.p_memsz : hi;
    }
    if (lo == UINT64_MAX || search.base < lo || search.base >= hi) return 0;
    search.found = {lo, hi};
    search.main_program = info->dlpi_name == nullptr || info->dlpi_name[0] == '\0';
    return 1;
}

constinit std::atomic<std::uint64_t> g_start{0}, g_end{0};

}  // namespace

namespace {

Search search_for(const void* address) {
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fbase == nullptr) return {};
    Search search{reinterpret_cast<std::uintptr_t>(info.dli_fbase), {}};
    dl_iterate_phdr(&visit, &search);
    // The module must also hold the address itself (dladdr's answer is its base).
    if (!search.found.contains(reinterpret_cast<std::uintptr_t>(address))) return {};
    return search;
}

}  // namespace

AddressRange loaded_image_of(const void* address) { return search_for(address).found; }

AddressRange library_image_of(const void* address) {
    const Search search = search_for(address);
    return search.main_program ? AddressRange{} : search.found;
}

AddressRange recorder_image() {
    return {g_start.load(std::memory_order_acquire), g_end.load(std::memory_order_acquire)};
}

void set_recorder_image(AddressRange image) {
    g_end.store(0, std::memory_order_release);  // never a range with a new start and an old end
    g_start.store(image.start, std::memory_order_release);
    g_end.store(image.end, std::memory_order_release);
}

}  // namespace stacksage::sampling
