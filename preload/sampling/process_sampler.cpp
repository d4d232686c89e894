#include "preload/sampling/process_sampler.hpp"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/node_file.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/text.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/sampling/recorder_image.hpp"
#include "preload/sampling/summary_writer.hpp"
#include "preload/sampling/wake_pipe.hpp"

namespace stacksage::sampling {

namespace {

struct ErrnoGuard {
    int saved = errno;
    ~ErrnoGuard() { errno = saved; }
};

struct BackendLive {
    std::atomic<std::uint64_t> opened{0};
    std::atomic<std::uint64_t> failed{0};
    std::atomic<int> error_claimed{0};
    char first_error[320] = {};
};

// Process-wide state: fixed storage, no constructors that need libstdc++.
SamplerConfig g_config;
SamplingPlan g_plan;
PapiCounters g_papi;
std::uint32_t g_usable = 0;
EventSpec g_specs[kMaxThreadEvents];
std::size_t g_spec_count = 0;
std::atomic<bool> g_active{false};
ThreadSlot* g_slots[kMaxSampledThreads];
std::atomic<std::size_t> g_slot_count{0};
std::atomic<std::uint64_t> g_unsampled{0};
BackendLive g_live[kBackendCount];
RawSampleSink g_raw;
alignas(64) unsigned char g_raw_buffer[64 * 1024];
// The drain thread.
std::atomic<bool> g_stop{false};
std::atomic<bool> g_drainer_running{false};
// Set once the main thread has ended through pthread_exit: from then on any
// ending thread may be the application's last (drain_loop).
std::atomic<bool> g_main_thread_ended{false};
// Until then (CLOCK_MONOTONIC ns), the drain thread looks every millisecond
// whether only the recorder's threads are left: a thread that ends is gone
// from the kernel's count a moment after its last call into us.
std::atomic<std::uint64_t> g_watch_for_last_thread_until_ns{0};
// A forked child starts its drain thread with its first new thread, not in
// fork() itself (creating threads there is what fork's rules warn about).
std::atomic<bool> g_drainer_pending{false};
// Once the application has its numbers, the drain thread wakes by its timeout.
WakePipe g_wake_pipe;
pollfd g_pollfds[kMaxSampledThreads + 1];

__attribute__((tls_model("initial-exec"))) thread_local ThreadSlot* t_slot = nullptr;

int current_tid() { return preload::raw::gettid(); }

void wake_the_drainer() { g_wake_pipe.wake(); }

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void note_failure(Backend b, const char* error) {
    BackendLive& live = g_live[static_cast<int>(b)];
    live.failed.fetch_add(1, std::memory_order_relaxed);
    int expected = 0;
    if (live.error_claimed.compare_exchange_strong(expected, 1))
        TextBuffer(live.first_error, sizeof live.first_error).add(error);
}

// At each thread's end: once the main thread has ended (pthread_exit), the
// ending thread may be the application's last, so the drain thread watches
// closely for a while (drain_loop); the process then ends within about a
// millisecond of it, as it would without us.
void watch_for_the_last_thread() {
    if (!g_main_thread_ended.load(std::memory_order_relaxed)) {
        if (current_tid() != static_cast<int>(::syscall(SYS_getpid))) return;
        g_main_thread_ended.store(true, std::memory_order_relaxed);
    }
    g_watch_for_last_thread_until_ns.store(monotonic_ns() + 100'000'000, std::memory_order_release);
    wake_the_drainer();
}

void finish_slot(ThreadSlot& s, bool own_thread) {
    disable_thread_events(s.events);
    s.drain(&g_raw);
    s.account_unrecorded();
    if (own_thread) {
        g_papi.thread_stop(s.papi);
        s.papi_cpu = static_cast<std::uint32_t>(sched_getcpu());
    }
    close_thread_events(s.events);
    s.end_ns = monotonic_ns();
    s.state.store(static_cast<int>(SlotState::Finished), std::memory_order_release);
}

void* drain_loop(void*) {
    // Signals meant for the application must never land here.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    // It is the recorder's, not the application's: snapshots of the
    // process's threads and the reports must not count it.
    preload::register_this_recorder_thread("stacksage-drain");
    std::uint64_t next_alone_check_ns = 0;
    while (!g_stop.load(std::memory_order_acquire)) {
        nfds_t n = 0;
        const int wake_fd = g_wake_pipe.read_end_if_ours();
        if (wake_fd >= 0) g_pollfds[n++] = {wake_fd, POLLIN, 0};
        const std::size_t count = g_slot_count.load(std::memory_order_acquire);
        for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
            ThreadSlot* s = g_slots[i];
            if (s && s->state.load(std::memory_order_acquire) == static_cast<int>(SlotState::Active) &&
                s->events.ring_fd >= 0 && ring_still_open(s->events))
                g_pollfds[n++] = {s->events.ring_fd, POLLIN, 0};
        }
        // The kernel wakes us when a ring passes its watermark (half full);
        // the timeout bounds how stale the others get.
        const bool watching = monotonic_ns() < g_watch_for_last_thread_until_ns.load(std::memory_order_acquire);
        ::poll(g_pollfds, n, watching ? 1 : 200);
        if (wake_fd >= 0 && (g_pollfds[0].revents & POLLIN)) g_wake_pipe.drain();
        // A program whose main thread left through pthread_exit ends when its
        // last thread ends, by glibc's count of threads, which counts this
        // one: once only the recorder's threads are left, this one ends too,
        // and glibc's exit(0) in it ends the process as it would have ended
        // without us (the exit handlers, ours included, run here). Looked at
        // every 200 ms (one read of /proc/self/stat), and every millisecond
        // for 100 ms after a thread ended once the main thread had.
        if (const std::uint64_t now = monotonic_ns(); watching || now >= next_alone_check_ns) {
            next_alone_check_ns = now + 200'000'000;
            if (preload::only_recorder_threads_left()) break;
        }
        for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
            ThreadSlot* s = g_slots[i];
            if (s == nullptr || s->state.load(std::memory_order_acquire) != static_cast<int>(SlotState::Active))
                continue;
            if (!s->try_lock()) continue;  // its thread is ending and drains itself
            if (s->state.load(std::memory_order_acquire) == static_cast<int>(SlotState::Active))
                s->drain(&g_raw, true);
            s->unlock();
        }
    }
    preload::unregister_this_recorder_thread();
    g_drainer_running.store(false, std::memory_order_release);
    return nullptr;
}

void stop_drainer() {
    if (!g_drainer_running.load(std::memory_order_acquire)) return;
    g_stop.store(true, std::memory_order_release);
    wake_the_drainer();
    // Bounded wait: at exit nothing may hang on us.
    for (int i = 0; i < 2000 && g_drainer_running.load(std::memory_order_acquire); ++i) {
        timespec ts{0, 1000000};
        nanosleep(&ts, nullptr);
    }
}

void start_drainer() {
    if (g_config.start_thread == nullptr) return;
    if (!g_wake_pipe.is_open() && !g_wake_pipe.open()) return;
    g_stop.store(false);
    g_drainer_running.store(true);
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // The default stack size, not a small one: when the application's threads
    // are all gone, the process's exit handlers (the application's and the
    // model writer) run on this thread (drain_loop).
    preload::recorder_thread_starting();
    if (g_config.start_thread(&thread, &attr, &drain_loop, nullptr) != 0) {
        g_drainer_running.store(false);
        preload::recorder_thread_start_failed();
    }
    pthread_attr_destroy(&attr);
}

void list_backends(TextBuffer& t, std::uint32_t bits) {
    bool first = true;
    for (int i = 0; i < kBackendCount; ++i)
        if (bits & (1u << i)) {
            t.add(first ? "" : ",").add(backend_name(static_cast<Backend>(i)));
            first = false;
        }
}

}  // namespace

bool sampler_start(const SamplerConfig& config, char* message, std::size_t message_cap) {
    ErrnoGuard guard;
    TextBuffer msg(message, message_cap);
    g_config = config;
    if (!config.options.selection.enabled()) return false;
    PmuScan* scan = static_cast<PmuScan*>(::mmap(nullptr, sizeof(PmuScan), PROT_READ | PROT_WRITE,
                                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (scan == MAP_FAILED) {
        msg.add("sampling is off: no memory to read the PMU descriptions");
        return false;
    }
    scan_pmus(config.options.sysfs_root, *scan);
    SystemFacts facts;
    read_system_facts(config.options.proc_root, facts);
    const bool papi_wanted = config.options.selection.wants(Backend::Papi);
    const bool papi_ok = papi_wanted && g_papi.initialise();
    plan_sampling(*scan, facts, config.options,
                  papi_ok ? nullptr : (papi_wanted ? g_papi.reason() : "not requested"), g_plan);
    ::munmap(scan, sizeof(PmuScan));
    g_usable = g_plan.usable(config.options.selection);
    g_spec_count = build_event_specs(g_plan, config.options, g_usable, g_specs, kMaxThreadEvents);

    // What the user asked for and cannot have, said once per process.
    const std::uint32_t asked = config.options.selection.automatic ? kAllBackends : config.options.selection.backends;
    msg.add("sampling with ");
    if (g_usable == 0) msg.add("nothing");
    list_backends(msg, g_usable);
    for (int i = 0; i < kBackendCount; ++i) {
        const Backend b = static_cast<Backend>(i);
        if ((asked & backend_bit(b)) && !g_plan.of(b).available)
            msg.add("; ").add(backend_name(b)).add(": ").add(g_plan.of(b).reason);
    }
    if (g_usable == 0) return false;
    // The recorder's own image: samples of its own accesses are dropped.
    set_recorder_image(library_image_of(reinterpret_cast<const void*>(&sampler_start)));
    if (config.options.attribution) {
        AttributionOptions attribution;
        attribution.stack_bytes = config.options.stack_bytes;
        attribution.object_min_bytes = config.options.object_min_bytes;
        attribution.maps_path = config.maps_path;
        attribution.own_files_dir = config.own_files_dir;
        if (!attribution_start(attribution)) msg.add("; call sites and data objects: no memory for their tables");
    }

    if (config.options.raw_file && config.raw_file_path != nullptr) {
        int fd = ::open(config.raw_file_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        // Written by the drain thread while the application runs: away from
        // the low numbers an application reuses first (still checked before
        // each write).
        if (fd >= 0) fd = preload::move_to_high_fd(fd);
        SampleFileHeader header{};
        std::memcpy(header.magic, kSampleFileMagic, sizeof header.magic);
        header.version = kSampleFileVersion;
        header.header_bytes = sizeof header;
        header.record_bytes = sizeof(SampleFileRecord);
        header.pid = static_cast<std::uint32_t>(config.pid);
        header.start_monotonic_ns = config.start_monotonic_ns;
        header.start_realtime_ns = config.start_realtime_ns;
        TextBuffer(header.host, sizeof header.host).add(config.host);
        if (fd < 0 || !g_raw.writer.open(fd, g_raw_buffer, sizeof g_raw_buffer, header))
            msg.add("; raw sample file ").add(config.raw_file_path).add(" cannot be created");
    }
    g_active.store(true, std::memory_order_release);
    sampler_thread_begin();
    start_drainer();
    return true;
}

bool sampler_active() { return g_active.load(std::memory_order_acquire); }

void sampler_thread_begin() {
    if (!sampler_active() || t_slot != nullptr) return;
    ErrnoGuard guard;
    if (g_drainer_pending.exchange(false)) start_drainer();
    const std::size_t index = g_slot_count.fetch_add(1, std::memory_order_acq_rel);
    if (index >= kMaxSampledThreads) {
        g_slot_count.fetch_sub(1, std::memory_order_acq_rel);
        g_unsampled.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    void* memory = ::mmap(nullptr, thread_slot_bytes(), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (memory == MAP_FAILED) {
        g_unsampled.fetch_add(1, std::memory_order_relaxed);
        return;  // the index stays empty (nullptr): readers skip it
    }
    ThreadSlot* s = construct_thread_slot(memory);
    s->tid = current_tid();
    if (attribution_active() && current_thread_stack(s->stack_lo, s->stack_hi))
        attribution_set_thread_stack(s->stack_lo, s->stack_hi);
    s->start_ns = monotonic_ns();
    open_thread_events(g_specs, g_spec_count, g_config.options.ring_data_pages, s->events);
    for (int i = 0; i < kBackendCount; ++i) {
        const Backend b = static_cast<Backend>(i);
        if (s->events.opened_backends & backend_bit(b)) g_live[i].opened.fetch_add(1, std::memory_order_relaxed);
        if (s->events.failed_backends & backend_bit(b)) note_failure(b, s->events.error);
    }
    if (g_usable & backend_bit(Backend::Papi)) {
        g_papi.thread_start(s->papi);
        if (s->papi.running)
            g_live[static_cast<int>(Backend::Papi)].opened.fetch_add(1, std::memory_order_relaxed);
        else
            note_failure(Backend::Papi, s->papi.error);
    }
    s->state.store(static_cast<int>(SlotState::Active), std::memory_order_release);
    __atomic_store_n(&g_slots[index], s, __ATOMIC_RELEASE);
    t_slot = s;
    // The drain thread polls the rings it knew when it went to sleep: tell
    // it about this one (a thread that fills its ring before the next
    // timeout would otherwise lose samples).
    if (g_drainer_running.load(std::memory_order_acquire)) wake_the_drainer();
}

void sampler_thread_end() {
    watch_for_the_last_thread();
    ThreadSlot* s = t_slot;
    if (s == nullptr) return;
    ErrnoGuard guard;
    s->lock_wait();
    if (s->state.load(std::memory_order_acquire) == static_cast<int>(SlotState::Active)) finish_slot(*s, true);
    s->unlock();
    t_slot = nullptr;
}

void sampler_drain_all() {
    ErrnoGuard guard;
    const std::size_t count = g_slot_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
        ThreadSlot* s = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
        if (s == nullptr) continue;
        s->lock_wait();
        if (s->state.load(std::memory_order_acquire) == static_cast<int>(SlotState::Active)) s->drain(&g_raw);
        s->unlock();
    }
}

void sampler_after_fork_child() {
    // The forking thread is the child's main thread.
    g_main_thread_ended.store(false, std::memory_order_relaxed);
    g_watch_for_last_thread_until_ns.store(0, std::memory_order_relaxed);
    if (!sampler_active()) return;
    ErrnoGuard guard;
    attribution_after_fork_child();
    // The parent's rings are not mapped in the child (perf mappings are not
    // copied) and its threads do not exist here: forget them, close our
    // copies of their descriptors, and start over with this thread.
    const std::size_t count = g_slot_count.load();
    for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
        ThreadSlot* s = g_slots[i];
        if (s == nullptr) continue;
        close_thread_event_descriptors(s->events);
        ::munmap(s, thread_slot_bytes());
        g_slots[i] = nullptr;
    }
    g_slot_count.store(0);
    for (BackendLive& live : g_live) {
        live.opened.store(0);
        live.failed.store(0);
        live.error_claimed.store(0);
        live.first_error[0] = '\0';
    }
    g_unsampled.store(0);
    if (g_raw.writer.is_open()) {
        // The parent owns that file; the child writes none.
        g_raw.writer = SampleFileWriter{};
    }
    g_raw.lock.store(0);
    g_drainer_running.store(false);
    g_wake_pipe.close();
    t_slot = nullptr;
    sampler_thread_begin();
    // Until then, a single-threaded child's ring is drained at its exit
    // (what overflows is counted as lost).
    g_drainer_pending.store(g_config.start_thread != nullptr);
}

bool sampler_finish(const char* dir, const char* stem, char* error, std::size_t error_cap) {
    ErrnoGuard guard;
    if (!sampler_active()) return true;
    stop_drainer();
    const std::size_t count = g_slot_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
        ThreadSlot* s = __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE);
        if (s == nullptr) continue;
        s->lock_wait();
        if (s->state.load(std::memory_order_acquire) == static_cast<int>(SlotState::Active))
            finish_slot(*s, s == t_slot);
        s->unlock();
    }
    t_slot = nullptr;
    g_active.store(false, std::memory_order_release);
    attribution_stop_tracking();
    g_raw.writer.close();
    char path[4352];
    TextBuffer(path, sizeof path).add(dir).add("/").add(stem).add(formats::run_layout::kSamplesSuffix);
    return write_sample_summary(path, g_config, error, error_cap);
}

const SamplingPlan& sampler_plan() { return g_plan; }
std::uint32_t sampler_usable_backends() { return g_usable; }
std::size_t sampler_slot_count() {
    const std::size_t n = g_slot_count.load(std::memory_order_acquire);
    return n < kMaxSampledThreads ? n : kMaxSampledThreads;
}
const ThreadSlot* sampler_slot(std::size_t i) {
    return i < kMaxSampledThreads ? __atomic_load_n(&g_slots[i], __ATOMIC_ACQUIRE) : nullptr;
}
const PapiCounters& sampler_papi() { return g_papi; }
std::uint64_t sampler_threads_opened(Backend b) { return g_live[static_cast<int>(b)].opened.load(); }
std::uint64_t sampler_threads_failed(Backend b) { return g_live[static_cast<int>(b)].failed.load(); }
const char* sampler_first_error(Backend b) { return g_live[static_cast<int>(b)].first_error; }
std::uint64_t sampler_unsampled_threads() { return g_unsampled.load(); }

void sampler_reset_for_tests() {
    stop_drainer();
    const std::size_t count = g_slot_count.load();
    for (std::size_t i = 0; i < count && i < kMaxSampledThreads; ++i) {
        ThreadSlot* s = g_slots[i];
        if (s == nullptr) continue;
        if (s->state.load() == static_cast<int>(SlotState::Active)) close_thread_events(s->events);
        ::munmap(s, thread_slot_bytes());
        g_slots[i] = nullptr;
    }
    g_slot_count.store(0);
    for (BackendLive& live : g_live) {
        live.opened.store(0);
        live.failed.store(0);
        live.error_claimed.store(0);
        live.first_error[0] = '\0';
    }
    g_unsampled.store(0);
    g_raw.writer.close();
    g_raw.writer = SampleFileWriter{};
    g_active.store(false);
    g_usable = 0;
    g_spec_count = 0;
    g_drainer_pending.store(false);
    t_slot = nullptr;
    attribution_reset_for_tests();
}

}  // namespace stacksage::sampling
