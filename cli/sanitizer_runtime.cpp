#include "cli/sanitizer_runtime.hpp"

#include <dlfcn.h>

// Which runtime this build was made with (GCC defines __SANITIZE_*__, clang
// answers __has_feature).
#if defined(__SANITIZE_ADDRESS__)
#define STACKSAGE_ASAN 1
#elif defined(__SANITIZE_THREAD__)
#define STACKSAGE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STACKSAGE_ASAN 1
#elif __has_feature(thread_sanitizer)
#define STACKSAGE_TSAN 1
#endif
#endif

#if defined(STACKSAGE_ASAN)
extern "C" void __asan_init();
#define STACKSAGE_SANITIZER_INIT __asan_init
#elif defined(STACKSAGE_TSAN)
extern "C" void __tsan_init();
#define STACKSAGE_SANITIZER_INIT __tsan_init
#endif

namespace stacksage::cli {

std::string sanitizer_runtime_library() {
#ifdef STACKSAGE_SANITIZER_INIT
    // The shared runtime defines its init function; where it was loaded
    // from is where every traced process must load it from.
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&STACKSAGE_SANITIZER_INIT), &info) != 0 && info.dli_fname != nullptr) {
        std::string path = info.dli_fname;
        // A statically linked runtime (clang's default) lives in the
        // executable itself: there is nothing to preload.
        if (path.find("san") != std::string::npos && path.find(".so") != std::string::npos) return path;
    }
#endif
    return {};
}

std::string with_sanitizer_runtime(const std::string& preloads) {
    const std::string runtime = sanitizer_runtime_library();
    if (runtime.empty() || preloads.find(runtime) != std::string::npos) return preloads;
    const auto first_end = preloads.find(':');
    if (first_end == std::string::npos) return preloads.empty() ? runtime : preloads + ":" + runtime;
    return preloads.substr(0, first_end) + ":" + runtime + preloads.substr(first_end);
}

const char* sanitizer_options_variable() {
#if defined(STACKSAGE_ASAN)
    return sanitizer_runtime_library().empty() ? nullptr : "ASAN_OPTIONS";
#elif defined(STACKSAGE_TSAN)
    return sanitizer_runtime_library().empty() ? nullptr : "TSAN_OPTIONS";
#else
    return nullptr;
#endif
}

std::string sanitizer_options_for_traced_programs(const std::string& existing) {
    if (sanitizer_options_variable() == nullptr) return existing;
    // Later options win, so these go last.
    std::string options = existing;
#if defined(STACKSAGE_ASAN)
    // Traced programs run libraries built without frame pointers (Open MPI):
    // only the slow unwinder gives leak reports whose stacks name who leaked.
    options += (options.empty() ? "" : ":") + std::string("verify_asan_link_order=0:fast_unwind_on_malloc=0");
#endif
    options += (options.empty() ? "" : ":") +
               std::string("handle_segv=0:handle_abort=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0");
    return options;
}

}  // namespace stacksage::cli
