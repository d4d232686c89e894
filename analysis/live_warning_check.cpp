#include "analysis/live_warning_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include "analysis/flow_refs.hpp"
#include "core/model.hpp"
#include "core/run_model_schema.hpp"

namespace stacksage {

namespace {

struct Given {
    std::int64_t t = 0;
    std::int64_t since = 0;
    std::string_view what;
    std::string_view fix;
    std::optional<Cpuset> cpus;
    std::uint32_t process = 0;
};

std::string seconds_after(std::int64_t ns, std::int64_t origin) {
    return fmt::format("{:.1f} s", static_cast<double>(std::max<std::int64_t>(ns - origin, 0)) / 1e9);
}

}  // namespace

std::vector<Finding> check_live_warnings(const RunView& view) {
    std::vector<Finding> out;
    if (view.model == nullptr) return out;
    const Model& m = *view.model;
    const std::string_view prefix = run_keys::live_message_prefix;
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n) {
        const NodeView& node = view.nodes[n];
        std::int64_t origin = std::numeric_limits<std::int64_t>::max();
        for (std::uint32_t p : node.processes) origin = std::min(origin, view.processes[p].start_ns);
        // Per condition, the first warning of the node (one process gives it;
        // a process that took over the watch after exec could give another).
        std::map<std::string, Given> first;
        for (std::uint32_t p : node.processes) {
            const ComponentId id = view.processes[p].id;
            m.for_each_attr(id, [&](AttrKey key, const AttributeValue& value) {
                const std::string_view name = m.key_name(key);
                if (!name.starts_with(prefix) || !std::holds_alternative<std::string>(value)) return;
                const std::string condition(name.substr(prefix.size()));
                const auto find = [&](std::string_view other) { return m.find_key(std::string(other) + condition); };
                Given g;
                g.process = p;
                g.what = *m.get_string(id, key);
                if (auto k = find(run_keys::live_ns_prefix)) g.t = m.get_int(id, *k).value_or(0);
                g.since = g.t;
                if (auto k = find(run_keys::live_since_ns_prefix)) g.since = m.get_int(id, *k).value_or(g.t);
                if (auto k = find(run_keys::live_fix_prefix)) g.fix = m.get_string(id, *k).value_or("");
                if (auto k = find(run_keys::live_cpus_prefix)) g.cpus = m.get_cpuset(id, *k);
                auto [it, added] = first.emplace(condition, g);
                if (!added && g.t < it->second.t) it->second = g;
            });
        }
        for (const auto& [condition, g] : first) {
            const ProcessView& process = view.processes[g.process];
            Finding f;
            f.code = FindingCode::LiveWarning;
            f.severity = Severity::Info;
            f.check = "live";
            f.node = std::string(node.host);
            if (g.cpus) f.resources = *g.cpus;
            f.message = "Warned live at " + seconds_after(g.t, origin) + ": " + std::string(g.what);
            f.detail = "Said on stderr while the job ran, by pid " + std::to_string(process.pid) +
                       "; the condition held from " + seconds_after(g.since, origin) + " (" + condition + ")";
            f.suggestion = std::string(g.fix);
            if (!f.suggestion.empty() && f.suggestion[0] >= 'a' && f.suggestion[0] <= 'z') f.suggestion[0] -= 'a' - 'A';
            f.figures = {{"at_ms", (g.t - origin) / 1'000'000}, {"since_ms", (g.since - origin) / 1'000'000}};
            if (!process.flows.empty()) {
                f.flows.push_back(flow_ref(view, view.flows[process.flows.front()]));
                f.flow_count = 1;
            }
            out.push_back(std::move(f));
        }
    }
    return out;
}

}  // namespace stacksage
