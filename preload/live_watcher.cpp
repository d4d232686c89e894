#include "preload/live_watcher.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/auxv.h>
#include <time.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "preload/cgroup_cpu_quota.hpp"
#include "preload/live_conditions.hpp"
#include "preload/node_registry.hpp"
#include "preload/real_functions.hpp"
#include "preload/recorder_threads.hpp"
#include "preload/stderr_notice.hpp"
#include "preload/task_list.hpp"
#include "preload/text.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

namespace schema = event_schema::live_warning;

struct LiveSettings {
    bool on = true;
    bool quiet = false;  // events only, no line
    std::uint64_t hold_ns = 5'000'000'000;
};
constinit LiveSettings g_settings;
// The watcher thread was started (or never will be, in this process).
constinit std::atomic<bool> g_thread_started{false};
// The main thread left through pthread_exit: the process may end with its last thread.
constinit std::atomic<bool> g_main_thread_left{false};

constexpr std::uint64_t kReadingEveryNs = 1'000'000'000;
// The thread wakes this often to see whether it is the process's last.
constexpr long kNapNs = 100'000'000;
constexpr std::size_t kMaxMasks = 512;
constexpr char kThreadName[] = "stacksage-live";

bool word_is(const char* v, const char* word) { return std::strcmp(v, word) == 0; }

// "5", "2.5", "0.25": seconds, into ns. False when it is not such a number.
bool parse_seconds(const char* text, std::uint64_t& ns) {
    std::uint64_t whole = 0;
    const char* p = text;
    if (!read_decimal(p, 86'400, whole)) return false;
    std::uint64_t fraction = 0, scale = 1'000'000'000;
    if (*p == '.') {
        ++p;
        if (*p < '0' || *p > '9') return false;
        for (; *p >= '0' && *p <= '9'; ++p)
            if (scale > 1) {
                scale /= 10;
                fraction += static_cast<std::uint64_t>(*p - '0') * scale;
            }
    }
    if (*p != '\0') return false;
    ns = whole * 1'000'000'000 + fraction;
    return ns > 0;
}

void read_settings() {
    if (const char* v = std::getenv("STACKSAGE_LIVE"); v != nullptr && *v != '\0') {
        if (word_is(v, "off") || word_is(v, "0") || word_is(v, "no") || word_is(v, "false")) g_settings.on = false;
        else if (word_is(v, "quiet")) g_settings.quiet = true;
        else if (!(word_is(v, "on") || word_is(v, "1") || word_is(v, "yes") || word_is(v, "true"))) {
            char text[300];
            TextBuffer(text, sizeof text).add("STACKSAGE_LIVE='").add(v).add(
                "' is none of on, off, quiet; live warnings stay on");
            say(text);
        }
    }
    if (const char* v = std::getenv("STACKSAGE_LIVE_HOLD"); v != nullptr && *v != '\0') {
        std::uint64_t ns = 0;
        if (parse_seconds(v, ns)) {
            g_settings.hold_ns = ns;
        } else {
            char text[300];
            TextBuffer(text, sizeof text).add("STACKSAGE_LIVE_HOLD='").add(v).add(
                "' is not a number of seconds (like 5 or 2.5); using 5");
            say(text);
        }
    }
}

int own_omp_threads() { return omp_num_threads_from(std::getenv("OMP_NUM_THREADS")); }

// ---- reading /proc ------------------------------------------------------------

struct TaskStat {
    char state = '?';
    bool recorder = false;           // its name starts with "stacksage": a recorder thread
    std::uint64_t cpu_ticks = 0;     // utime + stime
    std::uint64_t start_ticks = 0;   // starttime
    int processor = -1;
};

// Parses a /proc/.../stat line: the comm in parentheses (it may hold spaces
// and ')'), then fields numbered from 3 (the state).
bool parse_stat(const char* text, long len, TaskStat& out) {
    const char* open = static_cast<const char*>(std::memchr(text, '(', static_cast<std::size_t>(len)));
    const char* end = text + len;
    const char* close = end;
    while (close > text && close[-1] != ')') --close;
    if (open == nullptr || close <= open + 1) return false;
    const char* comm = open + 1;
    const std::size_t comm_len = static_cast<std::size_t>(close - 1 - comm);
    out.recorder = has_recorder_thread_name(comm, comm_len);
    const char* p = close;
    int field = 2;
    std::uint64_t utime = 0, stime = 0;
    while (p < end && field < 39) {
        while (p < end && *p == ' ') ++p;
        if (p >= end) break;
        ++field;
        if (field == 3) {
            out.state = *p;
        } else if (field == 14 || field == 15 || field == 22 || field == 39) {
            std::uint64_t v = 0;
            const char* q = p;
            if (read_decimal(q, ~std::uint64_t{0} >> 1, v)) {
                if (field == 14) utime = v;
                if (field == 15) stime = v;
                if (field == 22) out.start_ticks = v;
                if (field == 39) out.processor = static_cast<int>(v);
            }
        }
        while (p < end && *p != ' ') ++p;
    }
    out.cpu_ticks = utime + stime;
    return field >= 22;
}

bool read_stat(const char* path, TaskStat& out) {
    char text[1024];
    const long n = raw::read_small_file(AT_FDCWD, path, text, sizeof text);
    return n > 0 && parse_stat(text, n, out);
}

// ---- one reading of the node ----------------------------------------------------

struct ThreadTicks {
    int tid;
    std::uint64_t ticks;
};

// The watcher's tables: only the watching thread touches them. constinit:
// no initializer may run at the library's start, which can come after a
// library constructor already created a thread and so the watcher.
constinit ThreadTicks g_previous[live::kMaxThreads], g_current[live::kMaxThreads];
constinit std::size_t g_previous_count = 0, g_current_count = 0;
constinit live::ThreadReading g_readings[live::kMaxThreads];
constinit std::size_t g_reading_count = 0;
constinit CpuMask g_masks[kMaxMasks];
constinit std::size_t g_mask_count = 0;
constinit CgroupCpuQuota g_quota;
constinit bool g_quota_read = false;
constinit live::HoldClock g_clocks[kLiveConditions];
constinit std::uint64_t g_last_reading_ns = 0;
constinit std::uint64_t g_ns_per_tick = 10'000'000;

std::uint32_t mask_index(const CpuMask& m) {
    for (std::size_t i = 0; i < g_mask_count; ++i)
        if (g_masks[i] == m) return static_cast<std::uint32_t>(i);
    if (g_mask_count == kMaxMasks) return static_cast<std::uint32_t>(kMaxMasks);  // left out
    g_masks[g_mask_count] = m;
    return static_cast<std::uint32_t>(g_mask_count++);
}

std::int64_t ticks_before(int tid) {
    std::size_t lo = 0, hi = g_previous_count;
    while (lo < hi) {
        const std::size_t mid = (lo + hi) / 2;
        if (g_previous[mid].tid < tid) lo = mid + 1;
        else hi = mid;
    }
    return lo < g_previous_count && g_previous[lo].tid == tid ? static_cast<std::int64_t>(g_previous[lo].ticks) : -1;
}

void read_threads_of(int pid, std::uint64_t interval_ns) {
    char task_dir[64];
    TextBuffer(task_dir, sizeof task_dir).add("/proc/").add_int(pid).add("/task");
    for_each_task(task_dir, [&](int tid) {
        if (g_reading_count == live::kMaxThreads) return;
        char path[96];
        TextBuffer(path, sizeof path).add("/proc/").add_int(pid).add("/task/").add_int(tid).add("/stat");
        TaskStat st;
        if (!read_stat(path, st) || st.recorder || st.state == 'Z' || st.state == 'X') return;
        CpuMask mask;
        if (!mask.read_thread(tid)) return;
        const std::uint32_t m = mask_index(mask);
        if (m >= kMaxMasks) return;
        live::ThreadReading& r = g_readings[g_reading_count++];
        r.mask = m;
        r.runnable = st.state == 'R';
        r.last_cpu = st.processor;
        const std::int64_t before = ticks_before(tid);
        r.has_interval = before >= 0 && interval_ns > 0;
        r.ran_ns = r.has_interval && st.cpu_ticks >= static_cast<std::uint64_t>(before)
                       ? (st.cpu_ticks - static_cast<std::uint64_t>(before)) * g_ns_per_tick
                       : 0;
        g_current[g_current_count++] = {tid, st.cpu_ticks};
    });
}

// Every registered process that still runs; frees the slots of the others.
void read_node(std::uint64_t interval_ns) {
    g_reading_count = g_current_count = g_mask_count = 0;
    NodeRegistry& registry = node_registry();
    for (std::size_t i = 0; i < NodeRegistry::kSlots; ++i) {
        RegistrySlot& slot = registry.slot(i);
        int pid = slot.pid.load(std::memory_order_acquire);
        if (pid <= 0) continue;
        char path[64];
        TextBuffer(path, sizeof path).add("/proc/").add_int(pid).add("/stat");
        TaskStat st;
        const bool alive = read_stat(path, st);
        std::uint64_t known = slot.start_ticks.load(std::memory_order_acquire);
        if (alive && known == 0) {
            slot.start_ticks.compare_exchange_strong(known, st.start_ticks, std::memory_order_acq_rel);
            known = st.start_ticks;
        }
        if (!alive || known != st.start_ticks) {  // gone, or the pid was reused
            slot.pid.compare_exchange_strong(pid, 0, std::memory_order_acq_rel);
            continue;
        }
        read_threads_of(pid, interval_ns);
    }
    // By tid, for the next reading's look-ups.
    for (std::size_t gap = g_current_count / 2; gap > 0; gap /= 2)
        for (std::size_t i = gap; i < g_current_count; ++i)
            for (std::size_t j = i; j >= gap && g_current[j - gap].tid > g_current[j].tid; j -= gap) {
                const ThreadTicks t = g_current[j];
                g_current[j] = g_current[j - gap];
                g_current[j - gap] = t;
            }
    for (std::size_t i = 0; i < g_current_count; ++i) g_previous[i] = g_current[i];
    g_previous_count = g_current_count;
}

std::int64_t throttled_growth() {
    if (!g_quota_read) {
        g_quota_read = true;
        read_cgroup_cpu_quota(g_quota);
        return -1;
    }
    if (!g_quota.has_quota()) return -1;
    const std::int64_t before = g_quota.throttled;
    reread_cgroup_cpu_quota(g_quota);
    if (before < 0 || g_quota.throttled < 0) return -1;
    return g_quota.throttled - before;
}

// ---- the warning ----------------------------------------------------------------

// "CPU 3" or "CPUs 0-1 (2 CPUs)".
void add_cpus(TextBuffer& text, const CpuMask& cpus) {
    char list[400];
    cpus.format_list(list, sizeof list);
    const unsigned n = cpus.count();
    if (n == 1) text.add("CPU ").add(list);
    else text.add("CPUs ").add(list).add(" (").add_uint(n).add(" CPUs)");
}

// "23:51:04 UTC" for a monotonic time.
void add_clock_time(TextBuffer& text, std::uint64_t mono_ns) {
    const std::uint64_t now_mono = monotonic_ns(), now_real = realtime_ns();
    const std::uint64_t ago = now_mono > mono_ns ? now_mono - mono_ns : 0;
    const std::uint64_t s = (now_real > ago ? now_real - ago : 0) / 1'000'000'000;
    text.add_uint((s / 3600) % 24, 2).add(":").add_uint((s / 60) % 60, 2).add(":").add_uint(s % 60, 2).add(
        " UTC");
}

struct Warning {
    LiveCondition condition;
    const char* source;  // "watcher", "mpi_init"
    std::uint64_t since_ns;
    const CpuMask* cpus;
    unsigned threads;
    unsigned allowed;
    std::int64_t throttled_periods;  // -1: not about throttling
    const char* what;
    const char* fix;
};

const char* condition_name(LiveCondition c) {
    switch (c) {
        case LiveCondition::Oversubscribed: return "oversubscribed";
        case LiveCondition::IdleCores: return "idle_cores";
        case LiveCondition::CpuThrottled: return "cpu_throttled";
    }
    return "unknown";
}

void give(const Warning& w) {
    ProcessState& p = process();
    const std::uint64_t now = monotonic_ns();
    char message[1024];
    TextBuffer text(message, sizeof message);
    text.add("live warning on ").add(p.host).add(": ").add(w.what);
    if (std::strcmp(w.source, "mpi_init") == 0) {
        text.add(" (at MPI_Init, ");
    } else {
        text.add(" (since ");
        add_clock_time(text, w.since_ns);
        text.add(", ").add_uint((now - w.since_ns + 500'000'000) / 1'000'000'000).add(" s, ");
    }
    text.add("pid ").add_int(p.pid).add("). Fix: ").add(w.fix).add(". The full report follows after the run.");
    const bool say_it = !p.quiet && !g_settings.quiet;
    if (say_it) {
        char line[1100];
        TextBuffer out(line, sizeof line);
        out.add("stacksage: ").add(message).add("\n");
        tell_stderr(out.c_str(), out.size());
    }
    char cpus[512] = {};
    if (w.cpus != nullptr) w.cpus->format_list(cpus, sizeof cpus);
    char buffer[3072];
    JsonLine line(buffer, sizeof buffer);
    begin_event(line, schema::event);
    line.field(schema::condition, condition_name(w.condition));
    line.field(schema::source, w.source);
    line.field_u(schema::since, w.since_ns);
    line.field(schema::cpus, cpus);
    line.field(schema::threads, static_cast<std::int64_t>(w.threads));
    line.field(schema::allowed_cpus, static_cast<std::int64_t>(w.allowed));
    if (w.throttled_periods >= 0) line.field(schema::throttled_periods, w.throttled_periods);
    line.field(schema::what, w.what);
    line.field(schema::fix, w.fix);
    line.field(schema::message, message);
    line.field_bool(schema::said, say_it);
    // From the watcher thread, into this image's stream of the node's event
    // file (emit goes through append_to_node_file, as recorder threads do).
    emit(line, schema::event);
}

void judge_and_warn(std::uint64_t interval_start, std::uint64_t now, std::int64_t throttled) {
    live::NodeReading reading;
    reading.threads = g_readings;
    reading.thread_count = g_reading_count;
    reading.masks = g_masks;
    reading.mask_count = g_mask_count;
    reading.interval_ns = now - interval_start;
    reading.throttled_periods = throttled;
    static live::Verdict v;
    live::judge(reading, v);
    NodeRegistry& registry = node_registry();
    const std::uint64_t hold = g_settings.hold_ns;
    char what[600], fix[300];
    const auto fire = [&](LiveCondition c, bool holds) {
        live::HoldClock& clock = g_clocks[static_cast<int>(c)];
        return clock.update(holds, interval_start, now, hold) && !registry.warned(c) && registry.mark_warned(c);
    };
    if (fire(LiveCondition::Oversubscribed, v.oversubscribed)) {
        TextBuffer w(what, sizeof what);
        w.add("over-subscribed: ").add_uint(v.crowded_threads).add(" busy threads share ");
        add_cpus(w, v.crowded);
        TextBuffer(fix, sizeof fix).add("at most one busy thread per CPU: fewer threads (OMP_NUM_THREADS) or ranks "
                                        "per node, or bind them to more CPUs");
        give({LiveCondition::Oversubscribed, "watcher", g_clocks[0].since_ns(), &v.crowded, v.crowded_threads,
              v.allowed.count(), -1, what, fix});
    }
    if (fire(LiveCondition::IdleCores, v.idle)) {
        const unsigned allowed = v.allowed.count();
        TextBuffer w(what, sizeof what);
        w.add("idle cores: ");
        add_cpus(w, v.idle_cpus);
        w.add(" of the ").add_uint(allowed).add(" the job may use ran no busy thread (")
            .add_uint(v.busy_threads).add(v.busy_threads == 1 ? " busy thread)" : " busy threads)");
        TextBuffer(fix, sizeof fix).add("more threads or ranks (").add_uint(allowed).add(
            " busy threads fit), or ask for fewer CPUs");
        give({LiveCondition::IdleCores, "watcher", g_clocks[1].since_ns(), &v.idle_cpus, v.busy_threads,
              v.allowed.count(), -1, what, fix});
    }
    if (fire(LiveCondition::CpuThrottled, v.throttled)) {
        const std::int64_t milli = g_quota.quota_us * 1000 / g_quota.period_us;
        TextBuffer w(what, sizeof what);
        w.add("CPU quota throttling: the cgroup ").add(g_quota.cgroup).add(" grants ").add_int(milli / 1000).add(".")
            .add_uint(static_cast<std::uint64_t>(milli % 1000) / 10, 2).add(" CPUs and held back the job's ")
            .add_uint(v.busy_threads).add(" busy threads");
        const std::int64_t fits = milli >= 1000 ? milli / 1000 : 1;
        TextBuffer(fix, sizeof fix).add("at most ").add_int(fits).add(fits == 1 ? " busy thread" : " busy threads")
            .add(" (OMP_NUM_THREADS, ranks), or a larger CPU quota for the job");
        give({LiveCondition::CpuThrottled, "watcher", g_clocks[2].since_ns(), &v.allowed, v.busy_threads,
              v.allowed.count(), throttled, what, fix});
    }
}

// ---- the thread ---------------------------------------------------------------

void nap(long ns) {
    struct timespec pause{0, ns};
    // EINTR cannot happen: every signal is blocked here.
    raw::syscall6(SYS_nanosleep, reinterpret_cast<long>(&pause), 0);
}

void* watch_loop(void*) {
    // Signals meant for the application must never land here.
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    register_this_recorder_thread(kThreadName);
    ++this_thread().depth;  // anything interposed passes straight through
    if (const unsigned long tick = getauxval(AT_CLKTCK); tick > 0) g_ns_per_tick = 1'000'000'000 / tick;
    NodeRegistry& registry = node_registry();
    std::uint64_t next_try = 0;
    for (;;) {
        nap(kNapNs);
        const std::uint64_t now = monotonic_ns();
        const bool second = now >= next_try;
        // glibc ends a process whose main thread left through pthread_exit
        // when its last thread ends, this one included: looked at every
        // 100 ms once the main thread has left, every second before (one
        // read of /proc/self/stat).
        if ((second || g_main_thread_left.load(std::memory_order_relaxed)) && only_recorder_threads_left()) break;
        if (!second) continue;
        next_try = now + kReadingEveryNs;
        if (!registry.locked()) {
            if (!registry.try_lock()) continue;
            // Watching from now on: this first reading gives each thread's
            // CPU time so far, for the next one's intervals.
            read_node(0);
            g_last_reading_ns = now;
            continue;
        }
        const std::int64_t throttled = throttled_growth();
        read_node(now - g_last_reading_ns);
        judge_and_warn(g_last_reading_ns, now, throttled);
        g_last_reading_ns = now;
    }
    --this_thread().depth;
    unregister_this_recorder_thread();
    return nullptr;
}

}  // namespace

void start_live_watcher() {
    ProcessState& p = process();
    if (p.launcher != nullptr) {  // mpirun, srun, ...: not the job
        g_thread_started.store(true, std::memory_order_relaxed);
        return;
    }
    RecorderScope scope;
    read_settings();
    if (!g_settings.on) return;
    NodeRegistry& registry = node_registry();
    if (!registry.open(p.log.host_dir())) return;
    registry.enter(p.pid, static_cast<int>(p.rank), own_omp_threads());
}

void start_live_watcher_thread_once() {
    if (g_thread_started.load(std::memory_order_relaxed) || g_thread_started.exchange(true)) return;
    if (!g_settings.on || !node_registry().is_open()) return;
    RecorderScope scope;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    // The default stack: when the application's threads are all gone, glibc's
    // exit(0), and the exit handlers with it, may run on this thread.
    // Not counted as a recorder thread "starting" (recorder_threads.hpp): a
    // snapshot would wait for it to be scheduled and register (tens of ms at
    // MPI_Init on a loaded node, for every rank). Named here instead, before
    // it runs: snapshots leave out threads of the recorder's name.
    pthread_t thread;
    if (real::pthread_create()(&thread, &attr, &watch_loop, nullptr) == 0)
        if (auto setname = real::pthread_setname_np()) setname(thread, kThreadName);
    pthread_attr_destroy(&attr);
}

void live_watcher_main_thread_leaving() {
    if (raw::gettid() == process().pid) g_main_thread_left.store(true, std::memory_order_relaxed);
}

void live_watcher_after_fork() {
    g_thread_started.store(true, std::memory_order_relaxed);  // the parent's watcher, or another, watches it
    if (!g_settings.on) return;
    const ProcessState& p = process();
    node_registry().after_fork_in_child(p.pid, static_cast<int>(p.rank), own_omp_threads());
}

void live_check_at_mpi_init() {
    start_live_watcher_thread_once();
    NodeRegistry& registry = node_registry();
    if (!g_settings.on || !registry.is_open() || registry.warned(LiveCondition::Oversubscribed)) return;
    RecorderScope scope;
    unsigned ranks = 0, threads = 0;
    CpuMask allowed;
    live::mask_empty(allowed);
    for (std::size_t i = 0; i < NodeRegistry::kSlots; ++i) {
        RegistrySlot& slot = registry.slot(i);
        const int pid = slot.pid.load(std::memory_order_acquire);
        if (pid <= 0 || slot.rank.load(std::memory_order_acquire) < 0) continue;
        CpuMask mask;
        if (!mask.read_thread(pid)) continue;  // gone
        live::mask_or(allowed, mask);
        const int omp = slot.omp_threads.load(std::memory_order_acquire);
        ++ranks;
        threads += omp > 0 ? static_cast<unsigned>(omp) : 1;
    }
    const unsigned cpus = allowed.count();
    if (ranks == 0 || threads <= cpus || !registry.mark_warned(LiveCondition::Oversubscribed)) return;
    char what[600], fix[300];
    TextBuffer w(what, sizeof what);
    w.add("over-subscribed from the start: ").add_uint(ranks).add(ranks == 1 ? " rank" : " ranks")
        .add(" x OMP_NUM_THREADS = ").add_uint(threads).add(" threads for ");
    add_cpus(w, allowed);
    w.add(", all their masks allow");
    TextBuffer(fix, sizeof fix).add("ranks x OMP_NUM_THREADS at most ").add_uint(cpus)
        .add(" on this node: fewer ranks per node or fewer threads per rank");
    give({LiveCondition::Oversubscribed, "mpi_init", monotonic_ns(), &allowed, threads, cpus, -1, what, fix});
}

}  // namespace stacksage::preload
