// The sampling backends and the user's choice among them
// (`stacksage run --sample=off|auto|LIST`, STACKSAGE_SAMPLE in the preload).
//
// A selection is a bit set over the backends plus an "auto" flag: auto means
// "every backend that works here", decided on each node, since the nodes of
// one job need not have the same processors or kernel settings.
#pragma once

#include <cstddef>
#include <cstdint>

namespace stacksage::sampling {

enum class Backend : std::uint8_t {
    Pebs = 0,       // Intel PEBS load latency and stores (mem-loads, mem-stores)
    Ibs = 1,        // AMD IBS op
    PageFault = 2,  // software page-fault event with data addresses
    CpuClock = 3,   // software cpu-clock with the CPU number: where threads ran
    Papi = 4,       // PAPI cache-miss counters per thread (no addresses)
};
inline constexpr int kBackendCount = 5;

// "pebs", "ibs", "pagefault", "cpuclock", "papi".
const char* backend_name(Backend backend);
// nullptr-safe lookup of a name of exactly len characters; false when unknown.
bool backend_from_name(const char* name, std::size_t len, Backend& out);

constexpr std::uint32_t backend_bit(Backend b) { return 1u << static_cast<unsigned>(b); }
inline constexpr std::uint32_t kAllBackends = (1u << kBackendCount) - 1;

struct BackendSelection {
    std::uint32_t backends = 0;  // explicitly requested backends
    bool automatic = false;      // "auto": every available backend
    bool enabled() const { return automatic || backends != 0; }
    bool wants(Backend b) const { return automatic || (backends & backend_bit(b)) != 0; }
};

// Parses "off", "auto" or a comma-separated list of backend names (no
// duplicates, no empty items; "auto" and "off" stand alone). An empty or
// null text means "off".
//
// \return true and fills out.
// \return false with a message in error ("--sample: unknown backend 'pebz':
//         choose from off, auto, pebs, ibs, pagefault, cpuclock, papi").
bool parse_backend_selection(const char* text, BackendSelection& out, char* error,
                             std::size_t error_cap);

}  // namespace stacksage::sampling
