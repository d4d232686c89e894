#include "preload/sampling/summary_writer.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "core/formats/sample_summary_schema.hpp"
#include "preload/raw_syscall.hpp"
#include "preload/sampling/code_data_attribution.hpp"
#include "preload/text.hpp"

namespace stacksage::sampling {

namespace {

namespace schema = sample_summary_schema;

// Lines are built in a fixed buffer and written when it fills.
class LineFile {
public:
    explicit LineFile(int fd) : fd_(fd) {}
    TextBuffer& line() { return line_; }
    void end_line() {
        line_.add("\n");
        if (line_.truncated()) {
            ++truncated_;
        } else {
            if (used_ + line_.size() > sizeof buffer_) flush();
            std::memcpy(buffer_ + used_, line_.c_str(), line_.size());
            used_ += line_.size();
        }
        line_.clear();
    }
    bool flush() {
        std::size_t done = 0;
        while (done < used_) {
            const ssize_t n = ::write(fd_, buffer_ + done, used_ - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                failed_ = true;
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        used_ = 0;
        return !failed_;
    }
    bool failed() const { return failed_; }

private:
    int fd_;
    // A site's line holds its stack copy in hex (up to 64 KiB of it).
    char line_buf_[72 * 1024];
    TextBuffer line_{line_buf_, sizeof line_buf_};
    char buffer_[128 * 1024];
    std::size_t used_ = 0;
    std::uint64_t truncated_ = 0;
    bool failed_ = false;
};

// The summary is written once, at exit: static storage keeps 200 KiB off
// the exiting thread's stack.
alignas(64) unsigned char g_file_storage[sizeof(LineFile)];

std::uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// ,"name": (every field but a line's first).
TextBuffer& key(TextBuffer& t, const char* name) { return t.add(",\"").add(name).add("\":"); }

TextBuffer& begin(LineFile& f, const char* rec) {
    TextBuffer& t = f.line();
    t.add("{\"").add(schema::common::v).add("\":").add_int(kSampleSummaryVersion);
    return key(t, schema::common::rec).add_json_string(rec);
}

void backend_list(TextBuffer& t, std::uint32_t bits) {
    t.add("[");
    bool first = true;
    for (int i = 0; i < kBackendCount; ++i)
        if (bits & (1u << i)) {
            if (!first) t.add(",");
            t.add_json_string(backend_name(static_cast<Backend>(i)));
            first = false;
        }
    t.add("]");
}

void write_header(LineFile& f, const SamplerConfig& c) {
    const SamplingOptions& o = c.options;
    namespace sm = schema::sampling;
    TextBuffer& t = begin(f, sm::rec);
    key(t, sm::pid).add_int(c.pid);
    key(t, sm::host).add_json_string(c.host);
    key(t, sm::start_ns).add_uint(c.start_monotonic_ns);
    key(t, sm::end_ns).add_uint(monotonic_ns());
    key(t, sm::requested);
    if (o.selection.automatic) t.add("\"auto\""); else backend_list(t, o.selection.backends);
    key(t, sm::used);
    backend_list(t, sampler_usable_backends());
    const SamplingPlan& plan = sampler_plan();
    key(t, sm::ring_pages).add_uint(plan.ring_pages);
    key(t, sm::max_rings).add_uint(plan.max_rings);
    key(t, sm::periods).add("{\"").add(sm::period::pebs).add("\":").add_uint(o.pebs_period);
    key(t, sm::period::ibs).add_uint(o.ibs_period);
    key(t, sm::period::pagefault).add_uint(o.pagefault_period);
    key(t, sm::period::cpuclock_ns).add_uint(o.cpuclock_period_ns).add("}");
    key(t, sm::ldlat).add_uint(o.ldlat_cycles);
    key(t, sm::raw_file);
    if (o.raw_file && c.raw_file_path) {
        const char* slash = std::strrchr(c.raw_file_path, '/');
        t.add_json_string(slash ? slash + 1 : c.raw_file_path);
    } else {
        t.add("null");
    }
    key(t, sm::unsampled_threads).add_uint(sampler_unsampled_threads()).add("}");
    f.end_line();

    for (int i = 0; i < kBackendCount; ++i) {
        const Backend b = static_cast<Backend>(i);
        namespace bk = schema::backend;
        TextBuffer& l = begin(f, bk::rec);
        key(l, bk::name).add_json_string(backend_name(b));
        key(l, bk::requested).add(o.selection.wants(b) ? "true" : "false");
        key(l, bk::available).add(plan.of(b).available ? "true" : "false");
        key(l, bk::reason).add_json_string(plan.of(b).reason);
        key(l, bk::threads_opened).add_uint(sampler_threads_opened(b));
        key(l, bk::threads_failed).add_uint(sampler_threads_failed(b));
        key(l, bk::error).add_json_string(sampler_first_error(b)).add("}");
        f.end_line();
    }
}

void write_thread(LineFile& f, const ThreadSlot& s) {
    namespace th = schema::thread;
    TextBuffer& t = begin(f, th::rec);
    key(t, th::tid).add_int(s.tid);
    key(t, th::start_ns).add_uint(s.start_ns);
    key(t, th::end_ns).add_uint(s.end_ns);
    key(t, th::backends);
    backend_list(t, s.events.opened_backends | (s.papi.running || s.papi.values[0] ? backend_bit(Backend::Papi) : 0));
    key(t, th::samples).add_uint(s.samples);
    key(t, th::lost).add_uint(s.lost());
    key(t, th::throttled).add_uint(s.ring_stats.throttled);
    key(t, th::corrupt).add_uint(s.ring_stats.corrupt);
    key(t, th::oversize).add_uint(s.ring_stats.oversize);
    key(t, th::decode_errors).add_uint(s.decode_errors);
    key(t, th::dropped).add_uint(s.table.dropped());
    key(t, th::migrations).add_uint(s.migrations);
    key(t, th::recorder_samples).add_uint(s.recorder_samples);
    key(t, th::error).add_json_string(s.events.error).add("}");
    f.end_line();

    s.table.for_each([&](const AccessKey& k, const AccessEntry& e) {
        if (k.backend == Backend::CpuClock) {
            namespace ro = schema::ran_on;
            TextBuffer& r = begin(f, ro::rec);
            key(r, ro::tid).add_int(s.tid);
            key(r, ro::cpu).add_uint(k.cpu);
            key(r, ro::count).add_uint(e.count).add("}");
            f.end_line();
            return;
        }
        namespace ac = schema::access;
        TextBuffer& a = begin(f, ac::rec);
        key(a, ac::tid).add_int(s.tid);
        key(a, ac::backend).add_json_string(backend_name(k.backend));
        key(a, ac::cpu).add_uint(k.cpu);
        key(a, ac::level).add_json_string(served_by_name(k.served_by));
        key(a, ac::op).add_json_string(mem_op_name(k.op));
        key(a, ac::node).add_int(k.node);
        key(a, ac::remote).add(k.remote ? "true" : "false");
        key(a, ac::hops).add_uint(k.hops);
        key(a, ac::missed).add(k.missed ? "true" : "false");
        key(a, ac::count).add_uint(e.count);
        key(a, ac::weight_sum).add_uint(e.weight_sum);
        key(a, ac::weight_max).add_uint(e.weight_max);
        key(a, ac::latency_histogram).add("[");
        for (int b = 0; b < kLatencyBuckets; ++b) a.add(b ? "," : "").add_uint(e.histogram[b]);
        a.add("]");
        if (k.site >= 0) key(a, ac::site).add_int(k.site);
        if (k.object >= 0) key(a, ac::object).add_int(k.object);
        a.add("}");
        f.end_line();
    });

    const PapiCounters& papi = sampler_papi();
    if (papi.ready() && (s.papi.running || s.papi.error[0] != '\0' || s.papi.added[0] || s.papi.added[1] ||
                         s.papi.added[2])) {
        namespace pp = schema::papi;
        TextBuffer& p = begin(f, pp::rec);
        key(p, pp::tid).add_int(s.tid);
        key(p, pp::cpu);
        if (s.papi_cpu == 0xffffffffu) p.add("null"); else p.add_uint(s.papi_cpu);
        key(p, pp::complete).add(s.papi.running ? "false" : "true");
        key(p, pp::counters).add("{");
        bool first = true;
        for (std::size_t i = 0; i < papi.counter_count(); ++i) {
            if (!s.papi.added[i]) continue;
            p.add(first ? "" : ",").add_json_string(papi.counter_name(i)).add(":").add_uint(s.papi.values[i]);
            first = false;
        }
        p.add("}");
        key(p, pp::error).add_json_string(s.papi.error).add("}");
        f.end_line();
    }
}

void add_hex_bytes(TextBuffer& t, const unsigned char* bytes, std::size_t n) {
    static constexpr char kDigits[] = "0123456789abcdef";
    char chunk[256];
    std::size_t used = 0;
    for (std::size_t i = 0; i < n; ++i) {
        chunk[used++] = kDigits[bytes[i] >> 4];
        chunk[used++] = kDigits[bytes[i] & 0xf];
        if (used == sizeof chunk) {
            t.add(chunk, used);
            used = 0;
        }
    }
    t.add(chunk, used);
}

// A file mapping whose file cannot be read back after the run (deleted,
// or not readable by us) says so.
bool file_unreadable(const char* path) {
    const std::size_t len = std::strlen(path);
    static constexpr char kDeleted[] = " (deleted)";
    if (len >= sizeof kDeleted - 1 && std::strcmp(path + len - (sizeof kDeleted - 1), kDeleted) == 0) return true;
    return preload::raw::syscall6(SYS_faccessat, AT_FDCWD, reinterpret_cast<long>(path), R_OK) != 0;
}

void write_modules(LineFile& f) {
    namespace md = schema::module;
    MappingTable& maps = attribution_mappings();
    maps.read_build_ids();
    char path[4200];
    for (std::uint32_t i = 0; i < maps.count(); ++i) {
        const Mapping& m = maps.at(i);
        const std::size_t n = m.path_len < sizeof path - 1 ? m.path_len : sizeof path - 1;
        std::memcpy(path, maps.path(m), n);
        path[n] = '\0';
        const char* kind = m.kind == ModuleKind::Vdso ? "vdso" : m.kind == ModuleKind::AnonExec ? "anon_exec"
                           : file_unreadable(path)   ? "unreadable" : "file";
        TextBuffer& t = begin(f, md::rec);
        key(t, md::id).add_uint(i);
        key(t, md::path).add_json_string(m.kind == ModuleKind::File ? path : m.kind == ModuleKind::Vdso ? "[vdso]" : "");
        key(t, md::start).add_uint(m.start);
        key(t, md::end).add_uint(m.end);
        key(t, md::file_offset).add_uint(m.file_offset);
        key(t, md::build_id).add("\"");
        add_hex_bytes(t, m.build_id, m.build_id_len);
        t.add("\"");
        key(t, md::kind).add_json_string(kind);
        key(t, md::executable).add(m.executable ? "true" : "false").add("}");
        f.end_line();
    }
}

void write_sites(LineFile& f) {
    namespace st = schema::site;
    const SiteTable& sites = attribution_sites();
    sites.for_each([&](std::int32_t id, const SiteEntry& e) {
        TextBuffer& t = begin(f, st::rec);
        key(t, st::id).add_int(id);
        key(t, st::ip).add_uint(e.ip);
        key(t, st::frames).add("[");
        for (std::uint32_t k = 0; k < e.nframes; ++k) t.add(k ? "," : "").add_uint(e.frames[k]);
        t.add("]");
        const Unwind unwind = sites.unwind_of(e);
        key(t, st::unwind).add_json_string(unwind_name(unwind));
        key(t, st::samples).add_uint(e.samples.load(std::memory_order_relaxed));
        if (const StackCopy* c = unwind == Unwind::Stack ? sites.stack_of(e) : nullptr) {
            key(t, st::regs).add("{\"ip\":").add_uint(c->ip).add(",\"sp\":").add_uint(c->sp);
            t.add(",\"bp\":").add_uint(c->bp).add("}");
            key(t, st::stack).add("\"");
            add_hex_bytes(t, c->data, c->size);
            t.add("\"");
        }
        t.add("}");
        f.end_line();
    });
}

void write_objects(LineFile& f) {
    namespace ob = schema::object;
    const ObjectTable& objects = attribution_objects();
    objects.for_each([&](std::int32_t id, const ObjectEntry& e) {
        TextBuffer& t = begin(f, ob::rec);
        key(t, ob::id).add_int(id);
        key(t, ob::kind).add_json_string(object_kind_name(e.kind));
        key(t, ob::blocks).add_uint(e.blocks.load(std::memory_order_relaxed));
        key(t, ob::bytes).add_uint(e.bytes.load(std::memory_order_relaxed));
        switch (e.kind) {
        case ObjectKind::Heap:
        case ObjectKind::Mmap: key(t, ob::site).add_int(e.ref); break;
        case ObjectKind::Static:
            key(t, ob::module).add_int(e.ref);
            key(t, ob::offset).add_uint(e.detail);
            break;
        case ObjectKind::Stack: key(t, ob::tid).add_uint(e.detail); break;
        case ObjectKind::Unknown: break;
        }
        t.add("}");
        f.end_line();
    });
}

void write_attribution(LineFile& f) {
    namespace at = schema::attribution;
    const SiteTable& sites = attribution_sites();
    const ObjectTable& objects = attribution_objects();
    TextBuffer& t = begin(f, at::rec);
    key(t, at::sites).add_uint(sites.size());
    key(t, at::sites_dropped).add_uint(sites.dropped());
    key(t, at::stacks).add_uint(sites.stacks());
    key(t, at::stacks_dropped).add_uint(sites.stacks_dropped());
    key(t, at::objects).add_uint(objects.size());
    key(t, at::objects_dropped).add_uint(attribution_objects_dropped());
    key(t, at::min_block_bytes).add_uint(attribution_min_block_bytes());
    key(t, at::allocations_tracked).add_uint(attribution_allocations_tracked()).add("}");
    f.end_line();
}

}  // namespace

bool write_sample_summary(const char* path, const SamplerConfig& config, char* error, std::size_t error_cap) {
    TextBuffer err(error, error_cap);
    const int fd = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        err.add(path).add(": ").add(std::strerror(errno));
        return false;
    }
    LineFile* f = new (g_file_storage) LineFile(fd);
    write_header(*f, config);
    std::size_t threads = 0;
    for (std::size_t i = 0; i < sampler_slot_count(); ++i) {
        const ThreadSlot* s = sampler_slot(i);
        if (s == nullptr) continue;
        write_thread(*f, *s);
        ++threads;
    }
    if (attribution_active()) {
        attribution_refresh_mappings();
        write_modules(*f);
        write_sites(*f);
        write_objects(*f);
        write_attribution(*f);
    }
    TextBuffer& t = begin(*f, schema::end::rec);
    key(t, schema::end::threads).add_uint(threads).add("}");
    f->end_line();
    const bool ok = f->flush();
    ::close(fd);
    if (!ok) err.add(path).add(": write failed (disk full?)");
    return ok;
}

}  // namespace stacksage::sampling
