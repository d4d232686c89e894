#include "preload/sampling_hook.hpp"

#include <cstdlib>
#include <cstring>

#include "core/formats/run_layout.hpp"
#include "preload/real_functions.hpp"
#include "preload/sampling/process_sampler.hpp"
#include "preload/text.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// The log's name without ".jsonl": the summary and raw files share it.
void log_stem(char* out, std::size_t cap) {
    namespace layout = formats::run_layout;
    constexpr std::size_t suffix = layout::length_of(layout::kEventLogSuffix);
    const char* name = process().log.file_name();
    std::size_t n = std::strlen(name);
    if (n > suffix && std::strcmp(name + n - suffix, layout::kEventLogSuffix) == 0) n -= suffix;
    TextBuffer(out, cap).add(name, n);
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
    config.start_monotonic_ns = p.start_mono_ns;
    config.start_realtime_ns = p.start_real_ns;
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
    char dir[4400], stem[512], error[512] = {};
    host_dir(dir, sizeof dir);
    log_stem(stem, sizeof stem);
    const std::uint64_t start = monotonic_ns();
    const bool ok = sampling::sampler_finish(dir, stem, error, sizeof error);
    namespace samples = event_schema::samples;
    write_event(samples::event, [&](JsonLine& line) {
        char file[600];
        TextBuffer(file, sizeof file).add(stem).add(formats::run_layout::kSamplesSuffix);
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
