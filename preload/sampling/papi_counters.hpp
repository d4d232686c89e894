// The PAPI counting fallback: per-thread counts of cache misses per level
// (PAPI_L1_DCM, PAPI_L2_DCM, PAPI_L3_TCM, where the machine has them). PAPI
// gives counts, never data addresses, so these become attributes of the
// thread's PU -> cache paths, not samples.
//
// libpapi is optional twice: at build time (STACKSAGE_HAVE_PAPI) and at run
// time: it is opened with dlopen when sampling starts, so the preload does
// not load PAPI into applications that do not ask for it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage {
class TextBuffer;
}

namespace stacksage::sampling {

inline constexpr int kPapiMaxCounters = 3;

struct PapiThreadCounters {
    int event_set = -1;  // PAPI_NULL when not started
    bool running = false;
    bool added[kPapiMaxCounters] = {};  // counters PAPI accepted for this thread
    std::uint64_t values[kPapiMaxCounters] = {};
    char error[160] = {};  // why this thread has no counts
};

class PapiCounters {
public:
    // Opens libpapi and checks which cache-miss presets exist and can be
    // counted (added to an event set and started). Call once.
    // \return true when at least one counter can be used; false with the
    //         reason in reason() otherwise.
    bool initialise();
    const char* reason() const { return reason_; }
    bool ready() const { return ready_; }

    std::size_t counter_count() const { return count_; }
    // "PAPI_L1_DCM", ...
    const char* counter_name(std::size_t i) const { return names_[i]; }
    // The cache level counter i is about (1, 2, 3).
    int counter_level(std::size_t i) const { return levels_[i]; }

    // In the thread to be counted: registers it with PAPI and starts its counters.
    void thread_start(PapiThreadCounters& t);
    // In the same thread: stops and reads them into t.values.
    void thread_stop(PapiThreadCounters& t);

private:
    // Keeps the presets an event set accepts and starts; false when none.
    bool counters_can_count(TextBuffer& why);

    bool ready_ = false;
    char reason_[320] = {};
    std::size_t count_ = 0;
    int codes_[kPapiMaxCounters] = {};
    const char* names_[kPapiMaxCounters] = {};
    int levels_[kPapiMaxCounters] = {};
    void* library_ = nullptr;
    // libpapi's functions, looked up by name.
    int (*library_init_)(int) = nullptr;
    int (*thread_init_)(unsigned long (*)(void)) = nullptr;
    int (*query_event_)(int) = nullptr;
    int (*register_thread_)(void) = nullptr;
    int (*unregister_thread_)(void) = nullptr;
    int (*create_eventset_)(int*) = nullptr;
    int (*add_event_)(int, int) = nullptr;
    int (*start_)(int) = nullptr;
    int (*stop_)(int, long long*) = nullptr;
    int (*cleanup_eventset_)(int) = nullptr;
    int (*destroy_eventset_)(int*) = nullptr;
    char* (*strerror_)(int) = nullptr;
};

}  // namespace stacksage::sampling
