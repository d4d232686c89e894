#include "preload/sampling/summary_writer.hpp"

#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstring>
#include <new>

#include "core/formats/sample_summary_schema.hpp"
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
    char line_buf_[4096];
    TextBuffer line_{line_buf_, sizeof line_buf_};
    char buffer_[64 * 1024];
    std::size_t used_ = 0;
    std::uint64_t truncated_ = 0;
    bool failed_ = false;
};

// The summary is written once, at exit: static storage keeps 70 KiB off
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
        a.add("]}");
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
    TextBuffer& t = begin(*f, schema::end::rec);
    key(t, schema::end::threads).add_uint(threads).add("}");
    f->end_line();
    const bool ok = f->flush();
    ::close(fd);
    if (!ok) err.add(path).add(": write failed (disk full?)");
    return ok;
}

}  // namespace stacksage::sampling
