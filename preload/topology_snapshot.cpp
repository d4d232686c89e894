// The node's topology, written once per host as OUT/<host>/topology.xml by
// whichever process gets there first (normally the launcher, before any rank
// starts).
//
// hwloc is opened with dlopen(RTLD_LOCAL) in that one process only: linking
// it would load it into every traced program and let our copy's symbols
// interpose on an application's own (possibly older) hwloc.
//
// No reader ever sees a partial file: the XML goes to a private temporary
// name, then link(2) publishes it under the final name, which fails rather
// than overwrite if another process won the race.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <hwloc.h>
#include <hwloc/export.h>

#include "core/formats/run_layout.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/text.hpp"
#include "preload/tracer.hpp"

namespace stacksage::preload {

namespace {

constexpr const char* kTopologyFile = formats::run_layout::kTopologyXml;
constexpr const char* kClaimFile = "topology.xml.claim";

struct Hwloc {
    void* handle = nullptr;
    decltype(&hwloc_get_api_version) get_api_version = nullptr;
    decltype(&hwloc_topology_init) init = nullptr;
    decltype(&hwloc_topology_set_flags) set_flags = nullptr;
    decltype(&hwloc_topology_set_components) set_components = nullptr;
    decltype(&hwloc_topology_load) load = nullptr;
    decltype(&hwloc_topology_export_xmlbuffer) export_xmlbuffer = nullptr;
    decltype(&hwloc_free_xmlbuffer) free_xmlbuffer = nullptr;
    decltype(&hwloc_topology_destroy) destroy = nullptr;

    bool open() {
        static const char* const kNames[] = {"libhwloc.so.15", "libhwloc.so"};
        for (const char* n : kNames)
            if ((handle = dlopen(n, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
        if (handle == nullptr) return false;
        get_api_version = reinterpret_cast<decltype(get_api_version)>(
            dlsym(handle, "hwloc_get_api_version"));
        init = reinterpret_cast<decltype(init)>(dlsym(handle, "hwloc_topology_init"));
        set_flags = reinterpret_cast<decltype(set_flags)>(dlsym(handle, "hwloc_topology_set_flags"));
        set_components = reinterpret_cast<decltype(set_components)>(
            dlsym(handle, "hwloc_topology_set_components"));
        load = reinterpret_cast<decltype(load)>(dlsym(handle, "hwloc_topology_load"));
        export_xmlbuffer = reinterpret_cast<decltype(export_xmlbuffer)>(
            dlsym(handle, "hwloc_topology_export_xmlbuffer"));
        free_xmlbuffer =
            reinterpret_cast<decltype(free_xmlbuffer)>(dlsym(handle, "hwloc_free_xmlbuffer"));
        destroy = reinterpret_cast<decltype(destroy)>(dlsym(handle, "hwloc_topology_destroy"));
        // Same major ABI as the header we were built against.
        return get_api_version && init && set_flags && load && export_xmlbuffer &&
               free_xmlbuffer && destroy &&
               (get_api_version() >> 16) == (HWLOC_API_VERSION >> 16);
    }
};

// Exports this machine's topology as XML; nullptr (with why) on failure.
// The buffer is released with hwloc.free_xmlbuffer.
char* export_topology(Hwloc& hwloc, hwloc_topology_t& topo, int& len, const char*& why) {
    if (hwloc.init(&topo) != 0) {
        why = "hwloc_topology_init failed";
        return nullptr;
    }
    // The whole machine, also the CPUs outside our cgroup: the analyzer
    // shows what the job was given against what exists.
    hwloc.set_flags(topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    // The x86 backend binds the process to each CPU in turn to run cpuid;
    // the Linux backend reads the same structure from sysfs without moving us.
    if (hwloc.set_components) hwloc.set_components(topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
    if (hwloc.load(topo) != 0) {
        why = "hwloc_topology_load failed";
        return nullptr;
    }
    char* xml = nullptr;
    if (hwloc.export_xmlbuffer(topo, &xml, &len, 0) != 0 || xml == nullptr || len <= 0) {
        why = "hwloc_topology_export_xmlbuffer failed";
        return nullptr;
    }
    return xml;
}

// Writes data under a private name and links it to `name`.
long publish(int dir, const char* name, const char* data, std::size_t len) {
    char temp[128];
    TextBuffer(temp, sizeof temp).add(name).add(".tmp.").add_int(raw::getpid());
    long fd = raw::openat(dir, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return fd;
    long rc = raw::write_all(static_cast<int>(fd), data, len);
    raw::close(static_cast<int>(fd));
    if (rc >= 0) rc = raw::linkat(dir, temp, dir, name);
    raw::unlinkat(dir, temp, 0);
    return rc < 0 ? rc : 0;
}

}  // namespace

void write_topology_once() {
    RecorderScope scope;
    const int dir = process().log.host_dir();
    if (dir < 0) return;
    long existing = raw::openat(dir, kTopologyFile, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (existing >= 0) {  // another process wrote it
        raw::close(static_cast<int>(existing));
        return;
    }
    long claim = raw::openat(dir, kClaimFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                             0644);
    if (claim < 0) return;  // another process is writing it
    raw::close(static_cast<int>(claim));
    // The writer publishes topology.xml first and removes its claim after:
    // a process that found no topology.xml above and then got the claim may
    // have looked just before that writer published. Look again, now that
    // the claim is ours (else a second writer would write it again).
    existing = raw::openat(dir, kTopologyFile, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (existing >= 0) {
        raw::close(static_cast<int>(existing));
        raw::unlinkat(dir, kClaimFile, 0);
        return;
    }

    const std::uint64_t start = monotonic_ns();
    const char* why = nullptr;
    long rc = -1;
    Hwloc hwloc;
    if (!hwloc.open()) {
        why = "libhwloc.so.15 (hwloc 2.x) could not be loaded";
    } else {
        hwloc_topology_t topo = nullptr;
        int len = 0;
        char* xml = export_topology(hwloc, topo, len, why);
        if (xml != nullptr) {
            // hwloc counts the terminating NUL in len.
            std::size_t bytes = static_cast<std::size_t>(len);
            if (bytes > 0 && xml[bytes - 1] == '\0') --bytes;
            rc = publish(dir, kTopologyFile, xml, bytes);
            if (rc < 0) why = strerrordesc_np(static_cast<int>(-rc));
            hwloc.free_xmlbuffer(topo, xml);
        }
        if (topo != nullptr) hwloc.destroy(topo);
        // hwloc stays loaded: unloading a library that registered components
        // is a risk with nothing to gain at this point.
    }
    if (rc < 0 && why == nullptr) why = "unknown error";
    // On failure the claim stays: the next processes would fail the same way,
    // each paying for it.
    if (rc == 0) raw::unlinkat(dir, kClaimFile, 0);

    namespace topology = event_schema::topology;
    char buf[512];
    JsonLine line(buf, sizeof buf);
    begin_event(line, topology::event);
    line.field(topology::file, kTopologyFile);
    line.field_bool(topology::ok, rc == 0);
    if (why != nullptr) line.field(topology::error, why);
    line.field_u(topology::duration_ns, monotonic_ns() - start);
    emit(line, topology::event);
}

}  // namespace stacksage::preload
