#include "parsers/sample_summary.hpp"

#include <string_view>

#include <nlohmann/json.hpp>

#include "core/formats/sample_summary_schema.hpp"
#include "parsers/input_file.hpp"

namespace stacksage {

namespace {

using json = nlohmann::json;
namespace schema = sample_summary_schema;

std::uint64_t u64(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>()
           : it != j.end() && it->is_number_integer() && it->get<std::int64_t>() > 0
               ? static_cast<std::uint64_t>(it->get<std::int64_t>())
               : 0;
}
std::int64_t i64(const json& j, const char* key, std::int64_t fallback = 0) {
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
}
std::string str(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
bool boolean(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_boolean() && it->get<bool>();
}
std::vector<std::string> strings(const json& j, const char* key) {
    std::vector<std::string> out;
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) return out;
    for (const json& v : *it)
        if (v.is_string()) out.push_back(v.get<std::string>());
    return out;
}

std::vector<std::uint64_t> numbers(const json& j, const char* key) {
    std::vector<std::uint64_t> out;
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) return out;
    for (const json& v : *it)
        if (v.is_number_unsigned()) out.push_back(v.get<std::uint64_t>());
    return out;
}
// Hex digits, two per byte; empty when not hex (a torn or foreign value).
std::vector<std::uint8_t> hex_bytes(const std::string& hex) {
    std::vector<std::uint8_t> out;
    if (hex.size() % 2 != 0) return out;
    out.reserve(hex.size() / 2);
    const auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
    };
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        const int hi = digit(hex[i]), lo = digit(hex[i + 1]);
        if (hi < 0 || lo < 0) return {};
        out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
    }
    return out;
}

void read_code_and_data(const json& j, const std::string& rec, SampleSummary& s) {
    if (rec == schema::module::rec) {
        namespace md = schema::module;
        SampledModule m;
        m.id = i64(j, md::id, -1);
        m.path = str(j, md::path);
        m.start = u64(j, md::start);
        m.end = u64(j, md::end);
        m.file_offset = u64(j, md::file_offset);
        m.build_id = str(j, md::build_id);
        m.kind = str(j, md::kind);
        m.executable = boolean(j, md::executable);
        s.modules.push_back(std::move(m));
    } else if (rec == schema::site::rec) {
        namespace st = schema::site;
        SampledSite site;
        site.id = i64(j, st::id, -1);
        site.ip = u64(j, st::ip);
        site.frames = numbers(j, st::frames);
        site.unwind = str(j, st::unwind);
        site.samples = u64(j, st::samples);
        if (auto it = j.find(st::regs); it != j.end() && it->is_object()) {
            site.reg_ip = u64(*it, "ip");
            site.reg_sp = u64(*it, "sp");
            site.reg_bp = u64(*it, "bp");
        }
        site.stack = hex_bytes(str(j, st::stack));
        s.sites.push_back(std::move(site));
    } else if (rec == schema::object::rec) {
        namespace ob = schema::object;
        SampledObject o;
        o.id = i64(j, ob::id, -1);
        o.kind = str(j, ob::kind);
        o.site = i64(j, ob::site, -1);
        o.module = i64(j, ob::module, -1);
        o.offset = u64(j, ob::offset);
        o.tid = i64(j, ob::tid);
        o.blocks = u64(j, ob::blocks);
        o.bytes = u64(j, ob::bytes);
        s.objects.push_back(std::move(o));
    } else if (rec == schema::attribution::rec) {
        namespace at = schema::attribution;
        SampledAttribution& a = s.attribution;
        a.present = true;
        a.sites = u64(j, at::sites);
        a.sites_dropped = u64(j, at::sites_dropped);
        a.stacks = u64(j, at::stacks);
        a.stacks_dropped = u64(j, at::stacks_dropped);
        a.objects = u64(j, at::objects);
        a.objects_dropped = u64(j, at::objects_dropped);
        a.min_block_bytes = u64(j, at::min_block_bytes);
        a.allocations_tracked = u64(j, at::allocations_tracked);
    }
}

void read_record(const json& j, const std::string& rec, SampleSummary& s) {
    if (rec == schema::backend::rec) {
        namespace bk = schema::backend;
        SampledBackend b;
        b.name = str(j, bk::name);
        b.requested = boolean(j, bk::requested);
        b.available = boolean(j, bk::available);
        b.reason = str(j, bk::reason);
        b.threads_opened = u64(j, bk::threads_opened);
        b.threads_failed = u64(j, bk::threads_failed);
        b.error = str(j, bk::error);
        s.backends.push_back(std::move(b));
    } else if (rec == schema::thread::rec) {
        namespace th = schema::thread;
        SampledThread t;
        t.tid = i64(j, th::tid);
        t.start_ns = u64(j, th::start_ns);
        t.end_ns = u64(j, th::end_ns);
        t.backends = strings(j, th::backends);
        t.samples = u64(j, th::samples);
        t.lost = u64(j, th::lost);
        t.throttled = u64(j, th::throttled);
        t.corrupt = u64(j, th::corrupt);
        t.dropped = u64(j, th::dropped);
        t.migrations = u64(j, th::migrations);
        t.error = str(j, th::error);
        s.threads.push_back(std::move(t));
    } else if (rec == schema::access::rec) {
        namespace ac = schema::access;
        SampledAccess a;
        a.tid = i64(j, ac::tid);
        a.backend = str(j, ac::backend);
        a.cpu = i64(j, ac::cpu, -1);
        a.level = str(j, ac::level);
        a.op = str(j, ac::op);
        a.node = i64(j, ac::node, -1);
        a.remote = boolean(j, ac::remote);
        a.hops = i64(j, ac::hops);
        a.missed = boolean(j, ac::missed);
        a.count = u64(j, ac::count);
        a.weight_sum = u64(j, ac::weight_sum);
        a.weight_max = u64(j, ac::weight_max);
        if (auto it = j.find(ac::latency_histogram); it != j.end() && it->is_array())
            for (std::size_t b = 0; b < it->size() && b < a.latency_histogram.size(); ++b)
                if ((*it)[b].is_number_unsigned()) a.latency_histogram[b] = (*it)[b].get<std::uint64_t>();
        a.site = i64(j, ac::site, -1);
        a.object = i64(j, ac::object, -1);
        s.accesses.push_back(std::move(a));
    } else if (rec == schema::ran_on::rec) {
        namespace ro = schema::ran_on;
        s.ran_on.push_back({i64(j, ro::tid), i64(j, ro::cpu, -1), u64(j, ro::count)});
    } else if (rec == schema::papi::rec) {
        namespace pp = schema::papi;
        SampledPapi p;
        p.tid = i64(j, pp::tid);
        p.cpu = i64(j, pp::cpu, -1);
        p.complete = !j.contains(pp::complete) || boolean(j, pp::complete);
        if (auto it = j.find(pp::counters); it != j.end() && it->is_object())
            for (auto c = it->begin(); c != it->end(); ++c)
                if (c.value().is_number_unsigned()) p.counters[c.key()] = c.value().get<std::uint64_t>();
        p.error = str(j, pp::error);
        s.papi.push_back(std::move(p));
    } else if (rec == schema::end::rec) {
        s.complete = true;
    } else {
        read_code_and_data(j, rec, s);
    }
    // Unknown records: a newer writer; skipped.
}

}  // namespace

const SampledBackend* SampleSummary::backend(const std::string& name) const {
    for (const SampledBackend& b : backends)
        if (b.name == name) return &b;
    return nullptr;
}

Result<SampleSummary> read_sample_summary(const std::string& path) {
    std::string text;
    if (auto problem = read_input_file(path, input_limits::kSampleSummary, "a sampling summary", text))
        return make_error(path + ": cannot be read: " + problem->reason);
    return parse_sample_summary(text, path);
}

Result<SampleSummary> parse_sample_summary(std::string_view text, const std::string& path) {
    SampleSummary s;
    s.path = path;
    std::string pending_error;
    std::size_t number = 0, bad_line = 0;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t newline = text.find('\n', at);
        const bool ended = newline != std::string::npos;  // a line without its newline may be torn
        const std::string_view line = std::string_view(text).substr(at, (ended ? newline : text.size()) - at);
        at = ended ? newline + 1 : text.size();
        ++number;
        if (!pending_error.empty())  // a bad line that was not the last one
            return make_error(path + ": line " + std::to_string(bad_line) + ": " + pending_error +
                              "; the file is skipped");
        json j = json::parse(line, nullptr, false);
        if (j.is_discarded() || !j.is_object()) {
            pending_error = "not a JSON object";
            bad_line = number;
            if (!ended) break;
            continue;
        }
        namespace sm = schema::sampling;
        const std::string rec = str(j, schema::common::rec);
        if (number == 1) {
            if (rec != sm::rec)
                return make_error(path + ": line 1: not a stacksage sampling summary (no \"sampling\" record)");
            s.version = static_cast<int>(i64(j, schema::common::v));
            s.pid = i64(j, sm::pid);
            s.host = str(j, sm::host);
            s.start_ns = u64(j, sm::start_ns);
            s.end_ns = u64(j, sm::end_ns);
            s.used = strings(j, sm::used);
            if (auto it = j.find(sm::requested); it != j.end()) {
                if (it->is_string()) {
                    s.requested = it->get<std::string>();
                } else if (it->is_array()) {
                    for (const json& v : *it)
                        if (v.is_string()) s.requested += (s.requested.empty() ? "" : ",") + v.get<std::string>();
                }
            }
            if (auto it = j.find(sm::periods); it != j.end() && it->is_object()) {
                s.pebs_period = u64(*it, sm::period::pebs);
                s.ibs_period = u64(*it, sm::period::ibs);
                s.pagefault_period = u64(*it, sm::period::pagefault);
                s.cpuclock_period_ns = u64(*it, sm::period::cpuclock_ns);
            }
            s.raw_file = str(j, sm::raw_file);
            s.unsampled_threads = u64(j, sm::unsampled_threads);
            continue;
        }
        read_record(j, rec, s);
    }
    if (number == 0) return make_error(path + ": empty file: not a stacksage sampling summary");
    if (!pending_error.empty()) {
        if (bad_line == 1)
            return make_error(path + ": line 1: " + pending_error + ": not a stacksage sampling summary");
        s.torn_last_line = true;
    }
    return s;
}

}  // namespace stacksage
