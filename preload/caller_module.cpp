#include "preload/caller_module.hpp"

#include <dlfcn.h>
#include <unwind.h>

#include <atomic>

namespace stacksage::preload {

namespace {

// libgcc's unwinder, looked up when first needed rather than linked: a C
// program does not otherwise load libgcc_s, and loading it (with its
// constructor) into every traced process costs start-up time for a path
// that only std::thread creations and affinity changes take.
using Backtrace = _Unwind_Reason_Code (*)(_Unwind_Trace_Fn, void*);
using GetIp = _Unwind_Ptr (*)(struct _Unwind_Context*);
std::atomic<Backtrace> g_backtrace{nullptr};
std::atomic<GetIp> g_get_ip{nullptr};

bool load_unwinder() {
    if (g_backtrace.load(std::memory_order_acquire) != nullptr) return true;
    void* lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return false;
    auto get_ip = reinterpret_cast<GetIp>(dlsym(lib, "_Unwind_GetIP"));
    auto backtrace = reinterpret_cast<Backtrace>(dlsym(lib, "_Unwind_Backtrace"));
    if (get_ip == nullptr || backtrace == nullptr) return false;
    g_get_ip.store(get_ip, std::memory_order_release);
    g_backtrace.store(backtrace, std::memory_order_release);
    return true;
}

struct Frames {
    static constexpr int kMax = 32;
    std::uintptr_t ip[kMax];
    int count = 0;
};

_Unwind_Reason_Code collect(struct _Unwind_Context* ctx, void* arg) {
    auto* f = static_cast<Frames*>(arg);
    if (f->count >= Frames::kMax) return _URC_END_OF_STACK;
    f->ip[f->count++] = g_get_ip.load(std::memory_order_relaxed)(ctx);
    return _URC_NO_REASON;
}

}  // namespace

const Module* creator_module(std::uintptr_t return_address) {
    const Module* first = modules().find(return_address);
    if (first != nullptr && !first->skip) return first;
    Frames frames;
    if (load_unwinder()) g_backtrace.load(std::memory_order_acquire)(&collect, &frames);
    for (int i = 0; i < frames.count; ++i) {
        // A return address points after the call; step back into it.
        const Module* m = modules().find(frames.ip[i] - 1);
        if (m != nullptr && !m->skip) return m;
    }
    return first;
}

int module_chain(const Module** out, int max) {
    Frames frames;
    if (load_unwinder()) g_backtrace.load(std::memory_order_acquire)(&collect, &frames);
    int n = 0;
    for (int i = 0; i < frames.count && n < max; ++i) {
        const Module* m = modules().find(frames.ip[i] - 1);
        if (m == nullptr || m->skip) continue;
        if (n > 0 && out[n - 1] == m) continue;
        bool seen = false;
        for (int j = 0; j < n; ++j) seen = seen || out[j] == m;
        if (!seen) out[n++] = m;
    }
    return n;
}

}  // namespace stacksage::preload
