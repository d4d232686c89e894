#include "preload/sampling/sampling_options.hpp"

#include <cstdlib>
#include <cstring>

#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

bool read_u64(const char* name, std::uint64_t min, std::uint64_t max, std::uint64_t& out, TextBuffer& err) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') return true;
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 0);
    if (end == v || *end != '\0' || *v == '-' || n < min || n > max) {
        if (err.size() == 0)
            err.add(name).add("='").add(v).add("' is not a number from ").add_uint(min).add(" to ").add_uint(max);
        return false;
    }
    out = n;
    return true;
}

}  // namespace

bool options_from_environment(SamplingOptions& options, char* error, std::size_t error_cap) {
    TextBuffer err(error, error_cap);
    char selection_error[256];
    bool ok = parse_backend_selection(std::getenv("STACKSAGE_SAMPLE"), options.selection,
                                      selection_error, sizeof selection_error);
    if (!ok) {
        options.selection = BackendSelection{};
        err.add("STACKSAGE_SAMPLE: ").add(selection_error);
    }
    ok &= read_u64("STACKSAGE_SAMPLE_PERIOD_PEBS", 1, 1ull << 40, options.pebs_period, err);
    ok &= read_u64("STACKSAGE_SAMPLE_PERIOD_IBS", 0x10, 1ull << 26, options.ibs_period, err);
    ok &= read_u64("STACKSAGE_SAMPLE_PERIOD_PAGEFAULT", 1, 1ull << 40, options.pagefault_period, err);
    ok &= read_u64("STACKSAGE_SAMPLE_PERIOD_CPUCLOCK", 10000, 1ull << 40, options.cpuclock_period_ns, err);
    std::uint64_t v = options.ldlat_cycles;
    ok &= read_u64("STACKSAGE_SAMPLE_LDLAT", 1, 0xffff, v, err);
    options.ldlat_cycles = static_cast<std::uint32_t>(v);
    v = options.ring_data_pages;
    if (read_u64("STACKSAGE_SAMPLE_PAGES", 1, 1024, v, err)) {
        if ((v & (v - 1)) != 0) {
            if (err.size() == 0) err.add("STACKSAGE_SAMPLE_PAGES='").add_uint(v).add("' is not a power of two");
            ok = false;
        } else {
            options.ring_data_pages = static_cast<std::uint32_t>(v);
        }
    } else {
        ok = false;
    }
    const char* attribution = std::getenv("STACKSAGE_SAMPLE_ATTRIBUTION");
    if (attribution != nullptr && std::strcmp(attribution, "0") == 0) options.attribution = false;
    v = options.stack_bytes;
    if (read_u64("STACKSAGE_SAMPLE_STACK", 0, 32768, v, err)) {
        if ((v & 7) != 0) {
            if (err.size() == 0) err.add("STACKSAGE_SAMPLE_STACK='").add_uint(v).add("' is not a multiple of 8");
            ok = false;
        } else {
            options.stack_bytes = static_cast<std::uint32_t>(v);
        }
    } else {
        ok = false;
    }
    ok &= read_u64("STACKSAGE_OBJECT_MIN_BYTES", 1, 1ull << 48, options.object_min_bytes, err);

    const char* raw = std::getenv("STACKSAGE_SAMPLE_RAW");
    options.raw_file = raw != nullptr && *raw != '\0' && std::strcmp(raw, "0") != 0;
    const char* sysfs = std::getenv("STACKSAGE_SAMPLE_SYSFS");
    if (sysfs != nullptr && *sysfs != '\0') options.sysfs_root = sysfs;
    const char* proc = std::getenv("STACKSAGE_SAMPLE_PROC");
    if (proc != nullptr && *proc != '\0') options.proc_root = proc;
    return ok;
}

}  // namespace stacksage::sampling
