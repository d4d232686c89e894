// At exit, hands this process's event log to the model writer, which builds
// the process's own model (its flows attached to the node's topology) and
// writes it next to the log.
//
// The writer is a separate library (libstacksage-model.so, next to this
// one) opened with dlopen(RTLD_LOCAL) only now: it needs libstdc++, the
// model and hwloc, none of which the recorder loads into the application.
#include <dlfcn.h>

#include <cstring>

#include "preload/model_writer_api.h"
#include "preload/text.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

// Directory this library was loaded from, with a trailing '/'.
bool own_directory(char* out, std::size_t cap) {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr)
        return false;
    const char* slash = std::strrchr(info.dli_fname, '/');
    if (slash == nullptr) return false;
    TextBuffer(out, cap).add(info.dli_fname, static_cast<std::size_t>(slash - info.dli_fname + 1));
    return true;
}

}  // namespace

void write_process_model_at_exit(const char* skip_reason) {
    ProcessState& p = process();
    if (!p.write_model) return;
    // Only processes with something to place: a launcher, or a helper like
    // `sh -c` that neither ranks nor threads, would pay the writer's start-up
    // (loading it and the topology: milliseconds) for a model that adds
    // nothing to its log. Scripts start thousands of those.
    const bool interesting = p.launcher == nullptr &&
                             (p.rank >= 0 || p.thread_seq.load() > 0 || p.affinity_calls.load() > 0);
    if (!interesting) return;
    RecorderScope scope;
    const std::uint64_t start = monotonic_ns();
    char error[512] = {};
    bool ok = false;
    char library[4096];
    if (skip_reason != nullptr) {
        TextBuffer(error, sizeof error).add(skip_reason);
    } else if (!own_directory(library, sizeof library)) {
        TextBuffer(error, sizeof error).add("cannot locate the preload library's directory");
    } else {
        TextBuffer(library + std::strlen(library), sizeof library - std::strlen(library))
            .add(kStacksageModelWriterLibrary);
        void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
        auto write = handle ? reinterpret_cast<StacksageWriteProcessModel>(
                                  dlsym(handle, kStacksageModelWriterSymbol))
                            : nullptr;
        if (write == nullptr) {
            // dlerror() names the reason (EMFILE when the application used
            // up its descriptors, for instance).
            const char* why = dlerror();
            TextBuffer(error, sizeof error).add("cannot load ").add(library).add(why ? ": " : "").add(
                why ? why : "");
        } else {
            char host_dir[4400];
            TextBuffer(host_dir, sizeof host_dir).add(p.out_dir).add("/").add(p.host);
            ok = write(host_dir, p.log.file_name(), p.log.stream(), p.log.region_offsets(), p.log.region_count(), p.pid,
                       p.rank, error, sizeof error) == 0;
        }
        // The writer stays loaded: the process is exiting anyway, and its
        // static destructors run with everyone else's.
    }
    namespace model = event_schema::model;
    char buf[1024];
    JsonLine line(buf, sizeof buf);
    begin_event(line, model::event);
    line.field_bool(model::ok, ok);
    if (!ok) line.field(model::error, error);
    else if (error[0] != '\0') line.field(model::note, error);  // a worked-around problem
    line.field_u(model::duration_ns, monotonic_ns() - start);
    emit(line, model::event);
}

}  // namespace stacksage::preload
