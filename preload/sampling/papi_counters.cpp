#include "preload/sampling/papi_counters.hpp"

#include <dlfcn.h>
#include <pthread.h>

#include "preload/text.hpp"

#ifdef STACKSAGE_HAVE_PAPI
#include <papi.h>
#endif

namespace stacksage::sampling {

#ifdef STACKSAGE_HAVE_PAPI

namespace {

unsigned long thread_id() { return static_cast<unsigned long>(pthread_self()); }

struct Preset {
    int code;
    const char* name;
    int level;
};
// Data-cache misses per level; L3 is "total" because most processors only
// count that one there.
constexpr Preset kPresets[kPapiMaxCounters] = {
    {PAPI_L1_DCM, "PAPI_L1_DCM", 1},
    {PAPI_L2_DCM, "PAPI_L2_DCM", 2},
    {PAPI_L3_TCM, "PAPI_L3_TCM", 3},
};

template <class F> bool lookup(void* lib, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(lib, name));
    return out != nullptr;
}

}  // namespace

bool PapiCounters::initialise() {
    TextBuffer why(reason_, sizeof reason_);
    // RTLD_LOCAL: PAPI's symbols must not interpose on the application's.
    // The soname of the PAPI stacksage was built against first, then the
    // sonames of the PAPI releases whose interface this file uses (7.x
    // keeps 6.0's calls), then the development link. PAPI_library_init
    // refuses a library of another interface version, below.
    const char* const sonames[] = {STACKSAGE_PAPI_SONAME, "libpapi.so.7.1", "libpapi.so.7.0", "libpapi.so.6.0",
                                   "libpapi.so"};
    const char* last_error = nullptr;
    for (const char* soname : sonames) {
        if (*soname == '\0') continue;
        library_ = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (library_ != nullptr) break;
        last_error = dlerror();
    }
    if (library_ == nullptr) {
        why.add("libpapi cannot be loaded (").add(last_error ? last_error : "not found")
            .add("): install PAPI (Debian: libpapi7.0) or give its directory in LD_LIBRARY_PATH");
        return false;
    }
    const bool all = lookup(library_, "PAPI_library_init", library_init_) &&
                     lookup(library_, "PAPI_thread_init", thread_init_) &&
                     lookup(library_, "PAPI_query_event", query_event_) &&
                     lookup(library_, "PAPI_register_thread", register_thread_) &&
                     lookup(library_, "PAPI_unregister_thread", unregister_thread_) &&
                     lookup(library_, "PAPI_create_eventset", create_eventset_) &&
                     lookup(library_, "PAPI_add_event", add_event_) && lookup(library_, "PAPI_start", start_) &&
                     lookup(library_, "PAPI_stop", stop_) &&
                     lookup(library_, "PAPI_cleanup_eventset", cleanup_eventset_) &&
                     lookup(library_, "PAPI_destroy_eventset", destroy_eventset_) &&
                     lookup(library_, "PAPI_strerror", strerror_);
    if (!all) {
        why.add("libpapi lacks functions stacksage needs (a PAPI older than 5?)");
        return false;
    }
    const int version = library_init_(PAPI_VER_CURRENT);
    if (version != PAPI_VER_CURRENT) {
        why.add("PAPI_library_init failed (");
        if (version < 0) why.add(strerror_(version)); else why.add("version mismatch");
        why.add(")");
        return false;
    }
    if (const int rc = thread_init_(&thread_id); rc != PAPI_OK) {
        why.add("PAPI_thread_init failed (").add(strerror_(rc)).add(")");
        return false;
    }
    for (const Preset& p : kPresets) {
        if (query_event_(p.code) != PAPI_OK) continue;
        codes_[count_] = p.code;
        names_[count_] = p.name;
        levels_[count_] = p.level;
        ++count_;
    }
    if (count_ == 0) {
        why.add("PAPI lists none of PAPI_L1_DCM, PAPI_L2_DCM, PAPI_L3_TCM on this machine "
                "(no hardware counters: a virtual machine, or perf_event_paranoid too high for PAPI)");
        return false;
    }
    return counters_can_count(why);
}

// PAPI may list a preset it cannot count: on a VM whose kernel says "PMU not
// available due to virtualization", PAPI 7 still guessed the processor's
// events from CPUID, listed PAPI_L1_DCM, and then failed to add it to every
// thread's event set (each thread then counted nothing). One event set,
// here, once: keep the presets that can be added and started; say why when
// none can.
bool PapiCounters::counters_can_count(TextBuffer& why) {
    int set = PAPI_NULL;
    if (const int rc = create_eventset_(&set); rc != PAPI_OK) {
        why.add("PAPI_create_eventset: ").add(strerror_(rc));
        return false;
    }
    std::size_t kept = 0;
    int last_error = PAPI_OK;
    for (std::size_t i = 0; i < count_; ++i) {
        if (const int rc = add_event_(set, codes_[i]); rc != PAPI_OK) {
            last_error = rc;
            continue;
        }
        codes_[kept] = codes_[i];
        names_[kept] = names_[i];
        levels_[kept] = levels_[i];
        ++kept;
    }
    int start_error = PAPI_OK;
    if (kept > 0) {
        if (start_error = start_(set); start_error == PAPI_OK) {
            long long values[kPapiMaxCounters] = {};
            stop_(set, values);
        }
    }
    cleanup_eventset_(set);
    destroy_eventset_(&set);
    if (kept == 0 || start_error != PAPI_OK) {
        why.add("PAPI lists cache-miss presets but cannot count them here (")
            .add(strerror_(kept == 0 ? last_error : start_error))
            .add("): no hardware counters reachable (a virtual machine without a virtual PMU?)");
        count_ = 0;
        return false;
    }
    count_ = kept;
    ready_ = true;
    return true;
}

void PapiCounters::thread_start(PapiThreadCounters& t) {
    t = PapiThreadCounters{};
    if (!ready_) return;
    TextBuffer why(t.error, sizeof t.error);
    if (register_thread_() != PAPI_OK) {
        why.add("PAPI_register_thread failed");
        return;
    }
    int set = PAPI_NULL;
    if (int rc = create_eventset_(&set); rc != PAPI_OK) {
        why.add("PAPI_create_eventset: ").add(strerror_(rc));
        return;
    }
    for (std::size_t i = 0; i < count_; ++i) {
        if (int rc = add_event_(set, codes_[i]); rc != PAPI_OK) {
            // Some combinations do not fit the counters together: keep
            // what fits, say what did not.
            why.add(names_[i]).add(": ").add(strerror_(rc)).add("; ");
            continue;
        }
        t.added[i] = true;
    }
    if (int rc = start_(set); rc != PAPI_OK) {
        why.add("PAPI_start: ").add(strerror_(rc));
        cleanup_eventset_(set);
        destroy_eventset_(&set);
        return;
    }
    t.event_set = set;
    t.running = true;
}

void PapiCounters::thread_stop(PapiThreadCounters& t) {
    if (!ready_ || !t.running) return;
    long long values[kPapiMaxCounters] = {};
    if (stop_(t.event_set, values) == PAPI_OK) {
        // PAPI returns the values of the events that were added, in order.
        std::size_t next = 0;
        for (std::size_t i = 0; i < count_; ++i) {
            if (!t.added[i]) continue;
            const long long v = values[next++];
            t.values[i] = v > 0 ? static_cast<std::uint64_t>(v) : 0;
        }
    }
    cleanup_eventset_(t.event_set);
    destroy_eventset_(&t.event_set);
    unregister_thread_();
    t.running = false;
}

#else  // !STACKSAGE_HAVE_PAPI

bool PapiCounters::initialise() {
    TextBuffer(reason_, sizeof reason_).add("this build of stacksage has no PAPI support (libpapi was not found when it was built)");
    return false;
}
void PapiCounters::thread_start(PapiThreadCounters& t) { t = PapiThreadCounters{}; }
void PapiCounters::thread_stop(PapiThreadCounters&) {}

#endif

}  // namespace stacksage::sampling
