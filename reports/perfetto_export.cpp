#include "reports/perfetto_export.hpp"

#include <limits>

#include "analysis/activity.hpp"
#include "analysis/analyzer.hpp"

namespace stacksage {

nlohmann::json perfetto_trace(const AnalysisResult& analysis) {
    using json = nlohmann::json;
    const RunView& view = analysis.view;
    // Each host's origin: its first process or flow start.
    std::vector<std::int64_t> origin(view.nodes.size(), std::numeric_limits<std::int64_t>::max());
    for (const ProcessView& p : view.processes) {
        origin[p.node] = std::min(origin[p.node], p.start_ns);
        for (std::uint32_t fi : p.flows) origin[p.node] = std::min(origin[p.node], view.flows[fi].start_ns);
    }
    json events = json::array();
    for (std::size_t pi = 0; pi < view.processes.size(); ++pi) {
        const ProcessView& p = view.processes[pi];
        const std::string host(view.nodes[p.node].host);
        const std::int64_t trace_pid = static_cast<std::int64_t>(pi) + 1;
        const auto us = [&](std::int64_t ns) { return static_cast<double>(ns - origin[p.node]) / 1000.0; };
        std::string pname = host + ": " + std::string(p.name) + " (";
        if (p.launcher) pname += "launcher, ";
        else if (p.rank >= 0) pname += "rank " + std::to_string(p.rank) + ", ";
        pname += "pid " + std::to_string(p.pid) + ")";
        events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", trace_pid}, {"tid", 0}, {"args", {{"name", pname}}}});
        events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", trace_pid}, {"tid", 0}, {"args", {{"sort_index", trace_pid}}}});
        for (std::uint32_t fi : p.flows) {
            const FlowView& f = view.flows[fi];
            const RuntimeName& rt = view.runtime_of(f);
            const std::string tname = f.name.empty() ? std::string(to_string(f.kind)) + " " + std::to_string(f.tid) : std::string(f.name);
            events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", trace_pid}, {"tid", f.tid}, {"args", {{"name", tname}}}});
            json args = {{"host", host},
                         {"pid", p.pid},
                         {"tid", f.tid},
                         {"rank", p.rank >= 0 ? json(p.rank) : json(nullptr)},
                         {"runtime", rt.name},
                         {"family", std::string(to_string(rt.family))},
                         {"kind", std::string(to_string(f.kind))},
                         {"cpuset", f.placement.to_list_string()},
                         {"cpu_time_us", f.cpu_time_us},
                         {"state", std::string(activity_state(f))}};
            events.push_back({{"ph", "X"},
                              {"name", tname},
                              {"cat", rt.name},
                              {"pid", trace_pid},
                              {"tid", f.tid},
                              {"ts", us(f.start_ns)},
                              {"dur", static_cast<double>(f.lifetime_ns()) / 1000.0},
                              {"args", std::move(args)}});
            for (std::size_t i = 0; i < f.intervals.size(); ++i) {
                const AffinityInterval& iv = f.intervals[i];
                json a = {{"cpuset", iv.cpuset.to_list_string()}};
                if (i > 0) a["previous"] = f.intervals[i - 1].cpuset.to_list_string();
                else if (iv.start_ns <= f.start_ns) continue;  // the mask it started with: the X event says it
                events.push_back({{"ph", "i"}, {"s", "t"}, {"name", "affinity"}, {"cat", "affinity"}, {"pid", trace_pid},
                                  {"tid", f.tid}, {"ts", us(iv.start_ns)}, {"args", std::move(a)}});
            }
        }
    }
    return {{"traceEvents", std::move(events)},
            {"displayTimeUnit", "ms"},
            {"otherData", {{"generator", "stacksage"}, {"time_origin", "each host's first recorded event"}}}};
}

}  // namespace stacksage
