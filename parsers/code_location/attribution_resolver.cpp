#include "parsers/code_location/attribution_resolver.hpp"

#include <fmt/core.h>

#include "core/model_print.hpp"

namespace stacksage {

namespace {

// perf's PERF_CONTEXT_* markers in a call chain are the last 4095 values below 2^64.
constexpr std::uint64_t kPerfContextMarkers = ~std::uint64_t{0} - 4095;

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::string where(const CodeLocation& l) {
    if (!l.function.empty() && l.line > 0) return fmt::format("{} in {}", l.source(), l.function);
    return l.label();
}

bool is_system_module(std::string_view path) {
    for (std::string_view prefix : {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/", "/usr/libexec/"})
        if (path.substr(0, prefix.size()) == prefix) return true;
    const std::string_view name = base_name(path);
    return name.substr(0, 3) == "ld-" || name.find("libstacksage") != std::string_view::npos || path == "[vdso]";
}

std::string ResolvedSite::call_path_text(std::size_t max_frames) const {
    std::string out;
    std::size_t shown = 0;
    for (std::size_t i = user_frame; i < call_path.size(); ++i) {
        // The recorder's own frames (its thread trampoline) are not the application's path.
        if (base_name(call_path[i].module).find("libstacksage") != std::string_view::npos) continue;
        if (shown == max_frames) return out + " < ...";
        out += (shown++ ? " < " : "") + call_path[i].label();
    }
    return out;
}

AttributionResolver::AttributionResolver(const SampleSummary& summary, CodeFilesCache* shared)
    : summary_(summary),
      space_(summary.modules),
      own_cache_(shared != nullptr ? nullptr : std::make_unique<CodeFilesCache>()),
      cache_(shared != nullptr ? *shared : *own_cache_),
      symbols_(space_, cache_.files, cache_.symbols),
      unwinder_(space_, cache_.files) {
    for (const SampledSite& s : summary.sites) sites_.emplace(s.id, resolve_site(s));
    for (const SampledObject& o : summary.objects) objects_.emplace(o.id, resolve_object(o));
}

const ResolvedSite* AttributionResolver::site(std::int64_t id) const {
    const auto it = sites_.find(id);
    return it == sites_.end() ? nullptr : &it->second;
}

const ResolvedObject* AttributionResolver::object(std::int64_t id) const {
    const auto it = objects_.find(id);
    return it == objects_.end() ? nullptr : &it->second;
}

ResolvedSite AttributionResolver::resolve_site(const SampledSite& s) {
    ResolvedSite r;
    r.id = s.id;
    r.unwind = s.unwind;
    r.samples = s.samples;
    std::vector<std::uint64_t> frames;
    if (s.unwind == "stack") {
        UnwoundStack unwound = unwinder_.unwind(s);
        r.outcome = unwound.outcome;
        if (is_unwind_failure(unwound.outcome)) ++unwind_failures_[unwound.outcome];
        frames = std::move(unwound.frames);
    }
    if (frames.empty()) {
        // The kernel's chain (unwind "callchain"), or the sampled ip alone.
        // The kernel's own form of the chain starts with a context marker
        // (PERF_CONTEXT_USER, near 2^64) and the ip: neither is a caller.
        frames.push_back(s.ip);
        for (std::size_t i = 0; i < s.frames.size(); ++i) {
            const std::uint64_t f = s.frames[i];
            if (f >= kPerfContextMarkers || (frames.size() == 1 && f == s.ip)) continue;
            frames.push_back(f);
        }
    }
    r.call_path.reserve(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) r.call_path.push_back(symbols_.code(frames[i], i > 0));
    r.user_frame = 0;
    for (std::size_t i = 0; i < r.call_path.size(); ++i)
        if (!is_system_module(r.call_path[i].module) && !r.call_path[i].module.empty()) {
            r.user_frame = i;
            break;
        }
    for (std::size_t i = 0; i < r.call_path.size(); ++i) {
        const CodeLocation& l = r.call_path[i];
        if (l.gap == CodeGap::None || (i != r.user_frame && is_system_module(l.module))) continue;
        // The C runtime's entry point is linked in without line information
        // into every program: not a gap the user can close.
        if (l.gap == CodeGap::NoLineInfo && l.function == "_start") continue;
        ++frame_gaps_[l.gap];
        gap_modules_[l.gap].insert(l.module.empty() ? fmt::format("{:#x}", l.address) : l.module);
    }
    return r;
}

ResolvedObject AttributionResolver::resolve_object(const SampledObject& o) {
    ResolvedObject r;
    r.id = o.id;
    r.kind = o.kind;
    const bool block = o.kind == "heap" || o.kind == "mmap";
    if (block) {
        const std::string what = o.kind == "heap" ? "heap block" : "mapped region";
        const std::string size =
            o.blocks <= 1 ? fmt::format("{} of {}", what, human_size(static_cast<std::int64_t>(o.bytes)))
                          : fmt::format("{} {}s ({} in all)", o.blocks, what, human_size(static_cast<std::int64_t>(o.bytes)));
        const ResolvedSite* at = site(o.site);
        const std::string origin = at != nullptr ? "allocated at " + where(at->site()) : "from an unknown call site";
        r.label = size + " " + origin;
        r.name = fmt::format("the {}{} {}", what, o.blocks <= 1 ? "" : "s", origin);
    } else if (o.kind == "static") {
        const SampledModule* m = space_.module_by_id(o.module);
        std::string module = m != nullptr ? std::string(base_name(m->path)) : "an unknown module";
        std::string symbol;
        if (m != nullptr) symbol = symbols_.data(m->start + (o.offset - m->file_offset)).function;
        if (!symbol.empty()) {
            r.label = fmt::format("static `{}` in {}", symbol, module);
            r.name = fmt::format("`{}`", symbol);
        } else {
            r.label = fmt::format("static data at {}+{:#x}", module, o.offset);
            r.name = r.label;
        }
    } else if (o.kind == "stack") {
        r.label = fmt::format("stack of thread {}", o.tid);
        r.name = "the " + r.label;
    } else {
        r.label = "data of unknown origin";
        r.name = r.label;
    }
    return r;
}

std::vector<std::string> AttributionResolver::notes() const {
    std::vector<std::string> out;
    // Per thread: samples whose call path was cut short.
    struct ThreadCut {
        std::uint64_t samples = 0, cut = 0, no_site = 0;
        std::map<UnwindOutcome, std::uint64_t> why;
    };
    std::map<std::int64_t, ThreadCut> threads;
    for (const SampledAccess& a : summary_.accesses) {
        ThreadCut& t = threads[a.tid];
        t.samples += a.count;
        const ResolvedSite* s = site(a.site);
        if (s == nullptr) {
            t.no_site += a.count;
        } else if (s->unwind == "stack" && is_unwind_failure(s->outcome)) {
            t.cut += a.count;
            t.why[s->outcome] += a.count;
        }
    }
    const bool attributed = !summary_.sites.empty() || summary_.attribution.present;
    for (const auto& [tid, t] : threads) {
        if (t.cut > 0) {
            std::string why;
            for (const auto& [outcome, n] : t.why) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", to_string(outcome), n);
            out.push_back(fmt::format("thread {}: the call paths of {} of its {} sampled accesses could not be unwound "
                                      "to the end ({}); their sites are the innermost frames unwound, the callers "
                                      "above them are not guessed",
                                      tid, t.cut, t.samples, why));
        }
        if (attributed && t.no_site > 0)
            out.push_back(fmt::format("thread {}: {} of its {} sampled accesses have no call site (the recorder's "
                                      "site table was full or the sample carried no address)",
                                      tid, t.no_site, t.samples));
    }
    for (const auto& [gap, n] : frame_gaps_) {
        const std::set<std::string>& modules = gap_modules_.at(gap);
        std::string names;
        std::size_t shown = 0;
        for (const std::string& m : modules) {
            if (shown++ == 3) {
                names += fmt::format(" and {} more", modules.size() - 3);
                break;
            }
            names += (names.empty() ? "" : ", ") + std::string(base_name(m));
        }
        out.push_back(fmt::format("{} in {}: {}", plural(n, "call-path frame", "call-path frames"), names, explain(gap)));
    }
    const SampledAttribution& a = summary_.attribution;
    if (a.sites_dropped > 0)
        out.push_back(fmt::format("{} had no room in the recorder's table of {} call sites; they have no site",
                                  plural(a.sites_dropped, "sample", "samples"), a.sites));
    if (a.stacks_dropped > 0)
        out.push_back(fmt::format("{} got no stack copy (the recorder keeps {}); their call paths are the "
                                  "kernel's frame-pointer chain only",
                                  plural(a.stacks_dropped, "call site", "call sites"), a.stacks));
    if (a.objects_dropped > 0)
        out.push_back(fmt::format("{} had no room in the recorder's table of {} objects; their accesses have no object",
                                  plural(a.objects_dropped, "allocation", "allocations"), a.objects));
    return out;
}

}  // namespace stacksage
