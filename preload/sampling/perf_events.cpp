#include "preload/sampling/perf_events.hpp"

#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

#include "preload/node_file.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/sampling/call_path.hpp"
#include "preload/sampling/site_table.hpp"
#include "preload/sampling/user_registers.hpp"
#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

constexpr std::uint64_t kMemorySampleType = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                            PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                                            PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC;
constexpr std::uint64_t kPageFaultSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU;
// Code attribution (docs/sample-file.md, "Code and data"): the user call
// chain, and the user stack with the registers to unwind it after the run.
constexpr std::uint64_t kCallChainBits = PERF_SAMPLE_CALLCHAIN;
constexpr std::uint64_t kStackBits = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
constexpr std::uint64_t kCpuClockSampleType =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

perf_event_attr base_attr(std::uint32_t type, std::uint64_t period, std::uint64_t sample_type) {
    perf_event_attr a;
    std::memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = type;
    a.sample_period = period;
    a.sample_type = sample_type;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.exclude_guest = 1;
    // Per-thread events opened by the thread itself: no inherit (each new
    // thread opens its own), enabled at once. The timestamps use the same
    // clock as the event log's "t".
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    return a;
}

// Asks for the call chain (user only) and, with stack_bytes, a copy of that
// much of the user stack with ip, sp and bp.
void request_code_attribution(perf_event_attr& a, const SamplingOptions& options, std::uint32_t stack_bytes) {
    if (!options.attribution) return;
    a.sample_type |= kCallChainBits;
    a.exclude_callchain_kernel = 1;
    // PERF_CONTEXT_USER and the ip come first, then the return addresses.
    a.sample_max_stack = static_cast<std::uint16_t>(kMaxSiteFrames + 2);
    if (options.stack_bytes > 0 && stack_bytes > 0 && kUserRegisterMask != 0) {
        // The top of the stack alone (the leaf's return address) needs no
        // registers: 32 bytes less per sample.
        a.sample_type |= stack_bytes > kTopOfStackBytes ? kStackBits : std::uint64_t{PERF_SAMPLE_STACK_USER};
        a.sample_regs_user = stack_bytes > kTopOfStackBytes ? kUserRegisterMask : 0;
        a.sample_stack_user = stack_bytes & ~7u;
    }
}

void add_spec(EventSpec* out, std::size_t cap, std::size_t& n, const perf_event_attr& attr, EventKind kind,
              int leader, const char* pmu) {
    if (n == cap) return;
    EventSpec& s = out[n++];
    s.attr = attr;
    s.kind = kind;
    s.leader = leader;
    TextBuffer(s.pmu, sizeof s.pmu).add(pmu);
}

// The raw system call: the preload interposes libc's syscall(), and the
// raw form reports -errno without touching the application's errno.
long perf_event_open(perf_event_attr* attr, int group_fd) {
    return preload::raw::syscall6(SYS_perf_event_open, reinterpret_cast<long>(attr), 0 /* this thread */,
                                  -1 /* any CPU */, group_fd, PERF_FLAG_FD_CLOEXEC);
}

}  // namespace

Backend backend_of(EventKind kind) {
    switch (kind) {
    case EventKind::PebsLoads:
    case EventKind::PebsStores:
    case EventKind::PebsLoadsAux: return Backend::Pebs;
    case EventKind::IbsOp: return Backend::Ibs;
    case EventKind::PageFault:
    case EventKind::PageFaultStack: return Backend::PageFault;
    case EventKind::CpuClock: return Backend::CpuClock;
    }
    return Backend::PageFault;
}

const char* event_kind_name(EventKind kind) {
    switch (kind) {
    case EventKind::PebsLoads: return "mem-loads";
    case EventKind::PebsStores: return "mem-stores";
    case EventKind::PebsLoadsAux: return "mem-loads-aux";
    case EventKind::IbsOp: return "ibs_op";
    case EventKind::PageFault: return "page-faults";
    case EventKind::PageFaultStack: return "page-faults-stack";
    case EventKind::CpuClock: return "cpu-clock";
    }
    return "?";
}

std::size_t build_event_specs(const SamplingPlan& plan, const SamplingOptions& options, std::uint32_t backends,
                              EventSpec* out, std::size_t cap) {
    std::size_t n = 0;
    if ((backends & backend_bit(Backend::Pebs)) && plan.of(Backend::Pebs).available) {
        for (std::size_t i = 0; i < plan.pebs_count; ++i) {
            const PebsTarget& t = plan.pebs[i];
            int leader = -1;
            if (t.has_loads_aux) {
                // Counting only: the kernel wants it as the group's leader
                // so that mem-loads gets its data source; it samples nothing.
                perf_event_attr aux = base_attr(static_cast<std::uint32_t>(t.type), 0, 0);
                aux.config = t.loads_aux.config[0];
                aux.config1 = t.loads_aux.config[1];
                aux.config2 = t.loads_aux.config[2];
                leader = static_cast<int>(n);
                add_spec(out, cap, n, aux, EventKind::PebsLoadsAux, -1, t.pmu);
            }
            perf_event_attr loads = base_attr(static_cast<std::uint32_t>(t.type), options.pebs_period, kMemorySampleType);
            loads.config = t.loads.config[0];
            loads.config1 = t.loads.config[1];
            loads.config2 = t.loads.config[2];
            loads.precise_ip = static_cast<std::uint64_t>(t.precise_ip) & 3;
            request_code_attribution(loads, options, options.stack_bytes);
            add_spec(out, cap, n, loads, EventKind::PebsLoads, leader, t.pmu);
            if (t.has_stores) {
                perf_event_attr stores = base_attr(static_cast<std::uint32_t>(t.type), options.pebs_period, kMemorySampleType);
                stores.config = t.stores.config[0];
                stores.config1 = t.stores.config[1];
                stores.config2 = t.stores.config[2];
                stores.precise_ip = static_cast<std::uint64_t>(t.precise_ip) & 3;
                request_code_attribution(stores, options, options.stack_bytes);
                add_spec(out, cap, n, stores, EventKind::PebsStores, -1, t.pmu);
            }
        }
    }
    if ((backends & backend_bit(Backend::Ibs)) && plan.of(Backend::Ibs).available && plan.ibs.type >= 0) {
        // IBS counts in units of 16 ops: the kernel drops the low 4 bits.
        const std::uint64_t period = options.ibs_period < 0x10 ? 0x10 : options.ibs_period & ~std::uint64_t{0xf};
        perf_event_attr ibs = base_attr(static_cast<std::uint32_t>(plan.ibs.type), period, kMemorySampleType);
        ibs.config = plan.ibs.op.config[0];
        ibs.config1 = plan.ibs.op.config[1];
        ibs.config2 = plan.ibs.op.config[2];
        if (!plan.ibs.exclude_kernel) {
            // Without swfilt, any exclude_* bit makes IBS refuse the event.
            ibs.exclude_kernel = 0;
            ibs.exclude_hv = 0;
            ibs.exclude_guest = 0;
        }
        request_code_attribution(ibs, options, options.stack_bytes);
        add_spec(out, cap, n, ibs, EventKind::IbsOp, -1, "ibs_op");
    }
    if ((backends & backend_bit(Backend::PageFault)) && plan.of(Backend::PageFault).available) {
        perf_event_attr pf = base_attr(PERF_TYPE_SOFTWARE, options.pagefault_period, kPageFaultSampleType);
        pf.config = PERF_COUNT_SW_PAGE_FAULTS;
        if (options.attribution && options.stack_bytes > 0) {
            // The stack copies from a sparser event: page faults come in
            // bursts, and a few KiB per sample would fill the ring (a site
            // needs one copy). Every sample keeps the top of the stack, for
            // the call path of leaf functions (call_path.hpp).
            perf_event_attr stacks = pf;
            // Not a multiple of the other's period: a fault that overflows
            // both events yields only one of the two samples (seen on Linux
            // 6.18), and every 16th access sample would be lost.
            stacks.sample_period = (options.pagefault_period * kStackEventPeriods < kStackEventMinPeriod
                                        ? kStackEventMinPeriod
                                        : options.pagefault_period * kStackEventPeriods) +
                                   1;
            request_code_attribution(stacks, options, options.stack_bytes);
            request_code_attribution(pf, options, kTopOfStackBytes);
            add_spec(out, cap, n, pf, EventKind::PageFault, -1, "software");
            add_spec(out, cap, n, stacks, EventKind::PageFaultStack, -1, "software");
        } else {
            request_code_attribution(pf, options, 0);
            add_spec(out, cap, n, pf, EventKind::PageFault, -1, "software");
        }
    }
    if ((backends & backend_bit(Backend::CpuClock)) && plan.of(Backend::CpuClock).available) {
        perf_event_attr cc = base_attr(PERF_TYPE_SOFTWARE, options.cpuclock_period_ns, kCpuClockSampleType);
        cc.config = PERF_COUNT_SW_CPU_CLOCK;
        add_spec(out, cap, n, cc, EventKind::CpuClock, -1, "software");
    }
    return n;
}

void explain_open_error(int err, EventKind kind, const char* pmu, char* out, std::size_t cap) {
    TextBuffer t(out, cap);
    t.add(pmu).add("/").add(event_kind_name(kind)).add(": ");
    const char* name = strerrorname_np(err);
    switch (err) {
    case EACCES:
    case EPERM:
        t.add("the kernel refused it (").add(name ? name : "EACCES")
            .add("): perf_event_paranoid, a seccomp filter or a container policy forbids it");
        break;
    case ENOENT:
    case EOPNOTSUPP:
    case EINVAL:
        t.add("the kernel cannot count it here (").add(name ? name : "EINVAL")
            .add("): the PMU is listed but does not support this event or its precise mode (a virtual machine's "
                 "PMU, or an older kernel)");
        break;
    case EBUSY:
        t.add("the PMU is busy (EBUSY): another profiler holds it (IBS has one op sampler per core)");
        break;
    case ENODATA:
        t.add("mem-loads needs its mem-loads-aux group leader (ENODATA)");
        break;
    case EMFILE:
    case ENFILE:
        t.add("no file descriptors left (").add(name ? name : "EMFILE").add("): raise ulimit -n");
        break;
    case ENOMEM:
        t.add("the ring buffer could not be locked in memory (ENOMEM/EPERM from mmap): the locked-memory "
              "budget is spent; raise kernel.perf_event_mlock_kb or ulimit -l, or lower STACKSAGE_SAMPLE_PAGES");
        break;
    default:
        t.add(name ? name : "error").add(": ").add(strerror(err));
        break;
    }
}

std::size_t open_thread_events(const EventSpec* specs, std::size_t n, std::uint32_t data_pages, ThreadEvents& out) {
    const int saved_errno = errno;
    out.count = 0;
    out.ring_fd = -1;
    out.mapping = nullptr;
    int fd_of_spec[kMaxThreadEvents];
    const long page_size = ::sysconf(_SC_PAGESIZE);
    for (std::size_t i = 0; i < n && i < kMaxThreadEvents; ++i) {
        fd_of_spec[i] = -1;
        const EventSpec& spec = specs[i];
        const Backend backend = backend_of(spec.kind);
        int group_fd = -1;
        if (spec.leader >= 0) {
            group_fd = fd_of_spec[spec.leader];
            if (group_fd < 0) continue;  // its leader was refused, already explained
        }
        perf_event_attr attr = spec.attr;
        if (attr.sample_period != 0) {
            attr.watermark = 1;
            attr.wakeup_watermark = static_cast<std::uint32_t>(data_pages * page_size / 2);
        }
        long fd = perf_event_open(&attr, group_fd);
        if (fd == -EINVAL && (attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) {
            // Kernels before 5.12 know only the plain 64-bit weight.
            attr.sample_type = (attr.sample_type & ~std::uint64_t{PERF_SAMPLE_WEIGHT_STRUCT}) | PERF_SAMPLE_WEIGHT;
            fd = perf_event_open(&attr, group_fd);
        }
        if ((fd == -EINVAL || fd == -EOPNOTSUPP) && (attr.sample_type & kStackBits)) {
            // A PMU or kernel that cannot copy the user stack: the chain alone.
            attr.sample_type &= ~kStackBits;
            attr.sample_regs_user = 0;
            attr.sample_stack_user = 0;
            fd = perf_event_open(&attr, group_fd);
        }
        if ((fd == -EINVAL || fd == -EOPNOTSUPP || fd == -EOVERFLOW) && (attr.sample_type & kCallChainBits)) {
            // ... or no call chain (sample_max_stack above kernel.perf_event_max_stack): the ip alone.
            attr.sample_type &= ~kCallChainBits;
            attr.exclude_callchain_kernel = 0;
            attr.sample_max_stack = 0;
            fd = perf_event_open(&attr, group_fd);
        }
        if (fd == -EINVAL && attr.use_clockid) {
            // Some PMUs (and old kernels) refuse a clock choice; perf's own
            // clock is then CLOCK_MONOTONIC's close cousin.
            attr.use_clockid = 0;
            attr.clockid = 0;
            fd = perf_event_open(&attr, group_fd);
        }
        if (fd < 0) {
            out.failed_backends |= backend_bit(backend);
            if (out.error[0] == '\0')
                explain_open_error(static_cast<int>(-fd), spec.kind, spec.pmu, out.error, sizeof out.error);
            continue;
        }
        // Away from the low numbers an application that closes every
        // descriptor reuses first (each use is still checked by its id).
        fd = preload::move_to_high_fd(static_cast<int>(fd));
        if (attr.sample_period != 0) {
            if (out.ring_fd < 0) {
                const std::size_t bytes = static_cast<std::size_t>(1 + data_pages) * static_cast<std::size_t>(page_size);
                void* m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(fd), 0);
                if (m == MAP_FAILED) {
                    out.failed_backends |= backend_bit(backend);
                    if (out.error[0] == '\0')
                        explain_open_error(ENOMEM, spec.kind, spec.pmu, out.error, sizeof out.error);
                    ::close(static_cast<int>(fd));
                    continue;
                }
                out.mapping = m;
                out.mapping_bytes = bytes;
                out.ring = ring_view_of(m, bytes, static_cast<std::size_t>(page_size));
                out.ring_fd = static_cast<int>(fd);
            } else if (::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_SET_OUTPUT, out.ring_fd) != 0) {
                out.failed_backends |= backend_bit(backend);
                if (out.error[0] == '\0') explain_open_error(errno, spec.kind, spec.pmu, out.error, sizeof out.error);
                ::close(static_cast<int>(fd));
                continue;
            }
        }
        std::uint64_t id = 0;
        ::ioctl(static_cast<int>(fd), PERF_EVENT_IOC_ID, &id);
        const std::size_t k = out.count++;
        out.fd[k] = static_cast<int>(fd);
        out.id[k] = id;
        out.kind[k] = spec.kind;
        out.layout[k].configure(attr.sample_type, attr.sample_regs_user);
        out.monotonic_time[k] = attr.use_clockid != 0;
        out.sample_period[k] = attr.sample_period;
        fd_of_spec[i] = static_cast<int>(fd);
        out.opened_backends |= backend_bit(backend);
    }
    errno = saved_errno;
    return out.count;
}

bool event_still_open(const ThreadEvents& events, std::size_t i) {
    if (i >= events.count || events.fd[i] < 0) return false;
    const int saved_errno = errno;
    std::uint64_t id = 0;
    const bool same = ::ioctl(events.fd[i], PERF_EVENT_IOC_ID, &id) == 0 && id == events.id[i];
    errno = saved_errno;
    return same;
}

bool ring_still_open(const ThreadEvents& events) {
    for (std::size_t i = 0; i < events.count; ++i)
        if (events.fd[i] == events.ring_fd) return event_still_open(events, i);
    return false;
}

void disable_thread_events(ThreadEvents& events) {
    const int saved_errno = errno;
    for (std::size_t i = 0; i < events.count; ++i)
        if (event_still_open(events, i)) ::ioctl(events.fd[i], PERF_EVENT_IOC_DISABLE, 0);
    errno = saved_errno;
}

void close_thread_event_descriptors(ThreadEvents& events) {
    const int saved_errno = errno;
    // Members before the ring's owner: the kernel keeps the buffer until the
    // last event writing to it is gone anyway.
    for (std::size_t i = events.count; i-- > 0;)
        if (event_still_open(events, i)) ::close(events.fd[i]);
    events.count = 0;
    events.ring_fd = -1;
    errno = saved_errno;
}

void close_thread_events(ThreadEvents& events) {
    disable_thread_events(events);
    if (events.mapping != nullptr) ::munmap(events.mapping, events.mapping_bytes);
    events.mapping = nullptr;
    close_thread_event_descriptors(events);
}

}  // namespace stacksage::sampling
