// What the kernel says about this machine's PMUs, read from sysfs
// (/sys/bus/event_source/devices/<pmu>/{type,cpus,format/*,events/*,caps/*}).
//
// Only the PMUs memory sampling can use are described (the core PMUs "cpu",
// "cpu_core", "cpu_atom", ... and AMD's "ibs_op"); the others are counted.
// The root is a parameter so tests can point it at fixture directories.
// Fixed-size storage: the preload scans once per process and must not
// depend on libstdc++.
#pragma once

#include <cstddef>
#include <cstdint>

#include "preload/sampling/pmu_event_encoding.hpp"

namespace stacksage::sampling {

inline constexpr const char* kDefaultSysfsPmuRoot = "/sys/bus/event_source/devices";
inline constexpr std::size_t kMaxDescribedPmus = 8;
inline constexpr std::size_t kMaxPmuFormats = 32;

struct PmuDescription {
    char name[32] = {};
    int type = -1;  // perf_event_attr.type for this PMU; -1 when unreadable
    NamedFormat formats[kMaxPmuFormats] = {};
    std::size_t format_count = 0;
    // Event strings of the events/ directory that memory sampling uses;
    // empty when the PMU does not list them.
    char mem_loads[128] = {};
    char mem_stores[128] = {};
    char mem_loads_aux[128] = {};
    char cpus[256] = {};      // "cpus" (hybrid PMUs: the CPUs of that core type); may be empty
    int max_precise = -1;     // caps/max_precise; -1 when absent
    char pmu_name[48] = {};   // caps/pmu_name ("skylake", "sapphire_rapids", ...)
    bool zen4_ibs_extensions = false;  // ibs_op caps/zen4_ibs_extensions

    bool is_core_pmu() const;  // "cpu", "cpu_core", "cpu_atom", ...
    bool is_ibs_op() const;
    const FormatSpec* format(const char* field) const { return find_format(formats, format_count, field); }
};

struct PmuScan {
    char root[512] = {};
    bool root_readable = false;
    int root_errno = 0;        // why not, when !root_readable
    std::size_t total_pmus = 0;  // every PMU directory seen, described or not
    PmuDescription pmus[kMaxDescribedPmus] = {};
    std::size_t count = 0;

    const PmuDescription* find(const char* name) const;
};

// Scans root (nullptr: kDefaultSysfsPmuRoot). Never fails: an unreadable
// root gives root_readable = false, a PMU with unreadable parts keeps what
// could be read. Allocates nothing but what opendir does.
void scan_pmus(const char* root, PmuScan& out);

}  // namespace stacksage::sampling
