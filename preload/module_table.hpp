// ModuleTable: which loaded object (executable or shared library) holds an
// address; how the recorder names the runtime that created a thread.
//
// Built with dl_iterate_phdr on first use and refreshed only when a lookup
// misses (a library was dlopen'ed since). Entries are append-only and never
// change once published, so lookups take no lock and the returned names stay
// valid for the life of the process. A dlclose'd library's entry stays, but
// newer entries are searched first, so a range reused by a later library
// resolves to the later one.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

struct dl_phdr_info;

namespace stacksage::preload {

struct Module {
    std::uintptr_t start = 0, end = 0;  // lowest and one past the highest PT_LOAD byte
    const char* path = nullptr;         // absolute where the loader knows it
    // The path as a JSON string, quotes and escapes included, made once:
    // every thread_start writes two module paths.
    const char* json = nullptr;
    std::size_t json_len = 0;
    bool skip = false;                  // glibc, libstdc++, the loader, libgcc_s, us:
                                        // never the "creator" of a thread
};

class ModuleTable {
public:
    // The module holding addr, or nullptr (refreshes once on a miss).
    // Not for signal handlers or a forked child before reset_after_fork().
    const Module* find(std::uintptr_t addr);
    // Lookup without refreshing: safe where dl_iterate_phdr is not.
    const Module* find_no_refresh(std::uintptr_t addr) const;
    // The child of fork() may inherit a held refresh lock.
    void reset_after_fork();
    std::size_t size() const { return count_.load(std::memory_order_acquire); }

private:
    void refresh();
    static int on_object(::dl_phdr_info* info, std::size_t size, void* self);

    static constexpr std::size_t kMaxModules = 4096;
    static constexpr std::size_t kPoolBytes = 512 * 1024;
    Module modules_[kMaxModules];
    std::atomic<std::size_t> count_{0};
    char pool_[kPoolBytes] = {};
    std::size_t pool_used_ = 0;
    std::atomic<int> refresh_lock_{0};
};

ModuleTable& modules();

}  // namespace stacksage::preload
