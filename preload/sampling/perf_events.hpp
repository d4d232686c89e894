// The perf_event_attr of every event a sampled thread opens, and opening
// them from inside the thread so that each counts that thread only.
//
// All events of a thread share one ring buffer (PERF_EVENT_IOC_SET_OUTPUT),
// and every sample starts with PERF_SAMPLE_IDENTIFIER so the reader knows
// which event (hence which layout) a record belongs to: one locked ring per
// thread instead of one per event keeps within the locked-memory budget.
// The ring wakes a reader only when half full (watermark), so the kernel
// batches samples and nobody is woken per sample.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "preload/sampling/backend.hpp"
#include "preload/sampling/ring_reader.hpp"
#include "preload/sampling/sample_record.hpp"
#include "preload/sampling/sampling_options.hpp"
#include "preload/sampling/sampling_plan.hpp"

namespace stacksage::sampling {

enum class EventKind : std::uint8_t {
    PebsLoads,     // mem-loads with ldlat: load latency and data source
    PebsStores,    // mem-stores
    PebsLoadsAux,  // mem-loads-aux: the non-sampling group leader mem-loads needs on Sapphire Rapids and later
    IbsOp,
    PageFault,
    // Page faults again, every kStackEventPeriods-th one, with a copy of the
    // user stack: the stack copies of call sites whose frame-pointer chain
    // is not complete. Its samples are not counted as accesses (PageFault
    // has them all); they only give sites their stack.
    PageFaultStack,
    CpuClock,
};
// Its period: 16 page-fault periods, and at least 1024 faults (4 MiB first
// touched), so that a burst of faults does not fill the ring with copies;
// plus one (perf_events.cpp says why).
inline constexpr std::uint64_t kStackEventPeriods = 16;
inline constexpr std::uint64_t kStackEventMinPeriod = 1024;
Backend backend_of(EventKind kind);
const char* event_kind_name(EventKind kind);

struct EventSpec {
    perf_event_attr attr;
    EventKind kind;
    int leader = -1;  // index of the group leader among the specs, or -1
    char pmu[32];
};

inline constexpr std::size_t kMaxThreadEvents = 16;

// The events for the backends in `backends` (a bit set, see backend_bit)
// that the plan says are available. \return how many were written to out.
std::size_t build_event_specs(const SamplingPlan& plan, const SamplingOptions& options, std::uint32_t backends,
                              EventSpec* out, std::size_t cap);

// One thread's open events and their shared ring.
struct ThreadEvents {
    int fd[kMaxThreadEvents];
    std::uint64_t id[kMaxThreadEvents];
    EventKind kind[kMaxThreadEvents];
    SampleLayout layout[kMaxThreadEvents];
    std::uint64_t sample_period[kMaxThreadEvents];  // 0: a counting event (group leader)
    bool monotonic_time[kMaxThreadEvents];          // PERF_SAMPLE_TIME is CLOCK_MONOTONIC (use_clockid)
    std::size_t count = 0;
    void* mapping = nullptr;
    std::size_t mapping_bytes = 0;
    RingView ring;
    int ring_fd = -1;
    std::uint32_t opened_backends = 0;  // backends with at least one event open
    std::uint32_t failed_backends = 0;  // backends whose events the kernel refused
    char error[320] = {};               // the first refusal, in words

    // The index of the event with this sample id, or -1.
    int find(std::uint64_t sample_id) const {
        for (std::size_t i = 0; i < count; ++i)
            if (id[i] == sample_id) return static_cast<int>(i);
        return -1;
    }
};

// Opens the specs for the calling thread (pid 0, any CPU) and maps one ring
// of 1 + data_pages pages. Events the kernel refuses are left out and
// explained in out.error; a refused group leader takes its members with it.
// Never allocates; raises no signal; errno is preserved.
// \return the number of events opened.
std::size_t open_thread_events(const EventSpec* specs, std::size_t n, std::uint32_t data_pages,
                               ThreadEvents& out);

// Whether events.fd[i] still holds that event: the application may have
// closed it (a daemon closes every descriptor) and got the number for a file
// of its own, or an event of its own; one ioctl (the event's id). Every use
// of an event's descriptor checks first, and leaves a number that is no
// longer ours alone.
bool event_still_open(const ThreadEvents& events, std::size_t i);
// The same for the descriptor of the ring (one of the events').
bool ring_still_open(const ThreadEvents& events);

// Stops the events counting (before the last drain: the drain itself
// touches fresh pages, whose faults would otherwise land after it).
void disable_thread_events(ThreadEvents& events);
// Disables and closes the events and unmaps the ring (drain it first).
void close_thread_events(ThreadEvents& events);
// Closes the events' descriptors only (a child of fork, where the ring is
// not mapped).
void close_thread_event_descriptors(ThreadEvents& events);

// Why the kernel refused an event, in words, for errno err (and what to do).
void explain_open_error(int err, EventKind kind, const char* pmu, char* out, std::size_t cap);

}  // namespace stacksage::sampling
