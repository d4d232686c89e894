#include "preload/sampling_hook.hpp"

#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/next_allocator.hpp"
#include "preload/node_file.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/real_functions.hpp"
#include "preload/sampling/process_sampler.hpp"
#include "preload/text.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// The process image's stem, "rank-0003.pid-4711.s17" (17: its stream in
// node.events): the raw sample file's name, and (hidden, with a leading dot)
// the summary's until it is moved into node.samples.
void log_stem(char* out, std::size_t cap) {
    namespace layout = formats::run_layout;
    const ProcessState& p = process();
    TextBuffer stem(out, cap);
    if (p.rank >= 0) stem.add(layout::kRankPrefix).add_uint(static_cast<unsigned long>(p.rank), 4).add(".");
    stem.add(layout::kPidPrefix).add_uint(static_cast<unsigned>(p.pid)).add(".s").add_uint(p.log.stream());
}

// Moves the summary written at host_dir/name into a stream of the node's
// node.samples (linked to this image's event stream) and removes the file.
bool move_into_node_samples(const char* name, char* error, std::size_t error_cap) {
    ProcessState& p = process();
    const int dir = p.log.host_dir();
    long fd = raw::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        TextBuffer(error, error_cap).add(name).add(": ").add(strerrordesc_np(static_cast<int>(-fd)));
        return false;
    }
    struct stat st{};
    long rc = raw::fstat(static_cast<int>(fd), &st);
    const std::size_t len = rc == 0 && S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : 0;
    long addr = len > 0 ? raw::mmap(nullptr, len, PROT_READ, MAP_PRIVATE, static_cast<int>(fd), 0) : -EINVAL;
    raw::close(static_cast<int>(fd));
    raw::unlinkat(dir, name, 0);
    if (addr < 0 && addr > -4096) {
        TextBuffer(error, error_cap).add(name).add(": cannot be read back");
        return false;
    }
    NodeFile samples;
    rc = samples.open(dir, formats::node_file::FileKind::samples, p.host);
    if (rc == 0)
        rc = write_whole_stream(samples, p.pid, p.rank, p.log.stream(), reinterpret_cast<const char*>(addr), len);
    samples.close();
    raw::munmap(reinterpret_cast<void*>(addr), len);
    if (rc < 0) {
        TextBuffer(error, error_cap).add("node.samples: ").add(strerrordesc_np(static_cast<int>(-rc)));
        return false;
    }
    return true;
}

void host_dir(char* out, std::size_t cap) {
    const ProcessState& p = process();
    TextBuffer(out, cap).add(p.out_dir).add("/").add(p.host);
}

char g_raw_path[4608];

}  // namespace

void start_sampling() {
    RecorderScope scope;
    ProcessState& p = process();
    sampling::SamplerConfig config;
    char options_error[512] = {};
    const bool options_ok = sampling::options_from_environment(config.options, options_error, sizeof options_error);
    if (!config.options.selection.enabled() && options_ok) return;

    char dir[4400], stem[512];
    host_dir(dir, sizeof dir);
    log_stem(stem, sizeof stem);
    TextBuffer(g_raw_path, sizeof g_raw_path).add(dir).add("/").add(stem).add(".samples.bin");
    config.raw_file_path = g_raw_path;
    // The drain thread must not be traced as one of the application's.
    config.start_thread = real::pthread_create();
    config.pid = p.pid;
    config.host = p.host;
    config.own_files_dir = p.out_dir;
    config.start_monotonic_ns = p.start_mono_ns;
    config.start_realtime_ns = p.start_real_ns;
    // Before tracking starts: the allocator's own mmaps are no data objects.
    if (config.options.selection.enabled()) note_allocator_image();
    static char message[4096];
    const bool started = config.options.selection.enabled() &&
                         sampling::sampler_start(config, message, sizeof message);
    namespace sampling_event = event_schema::sampling;
    write_event(sampling_event::event, [&](JsonLine& line) {
        const char* requested = std::getenv("STACKSAGE_SAMPLE");
        line.field(sampling_event::requested, requested ? requested : "");
        line.field_bool(sampling_event::started, started);
        line.field(sampling_event::message, message);
        if (!options_ok) line.field(sampling_event::error, options_error);
    });
    if (!options_ok) {
        char text[700];
        TextBuffer(text, sizeof text).add(options_error).add("; using the defaults for it");
        say(text);
    }
}

void sampling_thread_begin() {
    if (!sampling::sampler_active()) return;
    RecorderScope scope;
    sampling::sampler_thread_begin();
}

void sampling_thread_end() {
    if (!sampling::sampler_active()) return;
    RecorderScope scope;
    sampling::sampler_thread_end();
}

void finish_sampling_at_exit() {
    if (!sampling::sampler_active()) return;
    RecorderScope scope;
    char dir[4400], stem[512], hidden[520], error[512] = {};
    host_dir(dir, sizeof dir);
    log_stem(stem, sizeof stem);
    TextBuffer(hidden, sizeof hidden).add(".").add(stem);
    const std::uint64_t start = monotonic_ns();
    bool ok = sampling::sampler_finish(dir, hidden, error, sizeof error);
    if (ok) {
        char name[600];
        TextBuffer(name, sizeof name).add(hidden).add(formats::run_layout::kSamplesSuffix);
        ok = move_into_node_samples(name, error, sizeof error);
    }
    namespace samples = event_schema::samples;
    write_event(samples::event, [&](JsonLine& line) {
        char file[64];
        TextBuffer(file, sizeof file).add(formats::run_layout::kNodeFilePrefix).add(formats::run_layout::kNodeSamplesSuffix);
        line.field(samples::file, file);
        line.field_bool(samples::ok, ok);
        if (!ok) line.field(samples::error, error);
        line.field_u(samples::duration_ns, monotonic_ns() - start);
    });
}

void restart_sampling_in_child() {
    if (!sampling::sampler_active()) return;
    RecorderScope scope;
    sampling::sampler_after_fork_child();
}

}  // namespace stacksage::preload
