#include "parsers/live_warning.hpp"

#include "core/cpuset.hpp"
#include "core/model.hpp"
#include "core/run_model_schema.hpp"
#include "parsers/json_document.hpp"

namespace stacksage {

namespace schema = event_schema::live_warning;

std::optional<LiveWarning> live_warning_from(const EventLogEvent& ev) {
    if (ev.doc == nullptr) return std::nullopt;
    const JsonDocument& doc = *ev.doc;
    const auto condition = doc.get_string(schema::condition);
    if (!condition || condition->empty()) return std::nullopt;
    LiveWarning w;
    w.condition = std::string(*condition);
    w.source = std::string(doc.get_string(schema::source).value_or("watcher"));
    w.t = ev.t;
    w.since = doc.get_int(schema::since).value_or(ev.t);
    w.cpus = std::string(doc.get_string(schema::cpus).value_or(""));
    w.threads = doc.get_int(schema::threads).value_or(-1);
    w.allowed_cpus = doc.get_int(schema::allowed_cpus).value_or(-1);
    w.what = std::string(doc.get_string(schema::what).value_or(""));
    w.message = std::string(doc.get_string(schema::message).value_or(""));
    w.fix = std::string(doc.get_string(schema::fix).value_or(""));
    w.said = doc.get_bool(schema::said).value_or(true);
    return w;
}

void add_live_warnings(Model& m, ComponentId process, const std::vector<LiveWarning>& warnings) {
    for (const LiveWarning& w : warnings) {
        const auto name = [&](std::string_view prefix) { return m.key(std::string(prefix) + w.condition); };
        m.set_attr(process, name(run_keys::live_message_prefix), std::string_view(w.what.empty() ? w.message : w.what));
        m.set_attr(process, name(run_keys::live_ns_prefix), w.t);
        m.set_attr(process, name(run_keys::live_since_ns_prefix), w.since);
        if (!w.fix.empty()) m.set_attr(process, name(run_keys::live_fix_prefix), std::string_view(w.fix));
        if (auto cpus = Cpuset::parse_list(w.cpus); cpus && !w.cpus.empty())
            m.set_attr(process, name(run_keys::live_cpus_prefix), *cpus);
    }
}

}  // namespace stacksage
