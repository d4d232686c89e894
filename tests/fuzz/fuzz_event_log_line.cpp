// One event-log line through the event-log reader (parse_event_log), one
// line at a time: the input up to its first newline is the line.
//
// Checked, beyond "no crash, no hang, no leak":
//  - the reader returns a summary or an error naming the log, and hands on at
//    most one event, from line 1, never one before time 0;
//  - the same line followed by a good line (so that it is no longer the last
//    one) is read consistently: an event stays the same event, a torn last
//    line becomes a corrupt file, an error stays an error;
//  - JsonDocument reads standard JSON and nothing else: a line it accepts is
//    accepted by nlohmann::json too (but for lone surrogate escapes, see
//    below), with the same common fields.
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "parsers/event_log_reader.hpp"
#include "parsers/json_document.hpp"

using namespace stacksage;

namespace {

const std::string kName = "fuzz.jsonl";
constexpr std::string_view kGood = R"({"v":1,"ev":"thread_end","t":5,"pid":7,"tid":8,"how":"return"})";

struct Seen {
    std::string name;
    int version;
    std::int64_t t, pid, tid;
    bool truncated;
    std::size_t line;
    bool operator==(const Seen&) const = default;
};

struct Read {
    std::optional<EventLogSummary> summary;
    std::string error;
    std::vector<Seen> events;
};

Read read(std::string_view text) {
    Read r;
    auto result = parse_event_log(text, kName, [&](const EventLogEvent& ev) {
        if (ev.doc == nullptr || !is_known_event(ev.name)) std::abort();
        r.events.push_back({std::string(ev.name), ev.version, ev.t, ev.pid, ev.tid, ev.truncated, ev.line});
    });
    if (result) {
        r.summary = *result;
        if (r.summary->events != r.events.size()) std::abort();
        std::size_t unknown = 0;
        for (const auto& [name, count] : r.summary->unknown_events) {
            if (is_known_event(name) || count == 0) std::abort();
            unknown += count;
        }
        // Every line counted once: an event, an unknown one, one before time 0,
        // or one with a pid or tid that is not positive.
        if (r.summary->events + unknown + r.summary->negative_time_events + r.summary->invalid_id_events >
            r.summary->lines)
            std::abort();
        for (const Seen& e : r.events)
            if (e.t < 0 || e.pid <= 0 || e.tid <= 0) std::abort();
    } else {
        r.error = result.error().message;
        // An error names the log and the line.
        if (r.error.rfind(kName + ": ", 0) != 0 || r.error.find(", line ") == std::string::npos) std::abort();
    }
    return r;
}

std::size_t unknown_count(const EventLogSummary& s) {
    std::size_t n = 0;
    for (const auto& [name, count] : s.unknown_events) n += count;
    return n;
}

// JsonDocument accepts standard JSON only. Lines with bytes outside ASCII
// are left out: the reader deliberately does not validate UTF-8 (a thread
// name or path is kept as the recorder wrote it), where nlohmann does.
void compare_with_nlohmann(std::string_view line) {
    for (const char c : line)
        if (static_cast<unsigned char>(c) >= 0x80) return;
    JsonDocument doc;
    if (!doc.parse(line)) {
        if (doc.error().empty()) std::abort();
        return;
    }
    nlohmann::json other;
    try {
        other = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
        // Lone surrogate escapes ("\udc00") are JSON by RFC 8259's grammar;
        // we read them as U+FFFD, nlohmann refuses them. Anything else we
        // accept is not JSON.
        if (std::string_view(e.what()).find("surrogate") == std::string_view::npos) std::abort();
        return;
    }
    if ((doc.type(doc.root()) == JsonType::Object) != other.is_object()) std::abort();
    if (!other.is_object()) return;
    if (doc.size(doc.root()) < other.size()) std::abort();
    for (const char* key : {"v", "t", "pid", "tid", "ev"}) {
        std::size_t occurrences = 0;
        for (auto m = doc.first_child(doc.root()); m != JsonDocument::kNone; m = doc.next(m))
            occurrences += doc.key(m) == key;
        if (occurrences != 1) continue;  // duplicates: we take the first, nlohmann the last
        const auto& value = other.at(key);
        if (auto i = doc.get_int(key)) {
            if (!value.is_number_integer() || value.get<std::int64_t>() != *i) std::abort();
        } else if (auto s = doc.get_string(key)) {
            if (!value.is_string() || value.get<std::string>() != *s) std::abort();
        }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view line(reinterpret_cast<const char*>(data), size);
    if (const std::size_t nl = line.find('\n'); nl != std::string_view::npos) line = line.substr(0, nl);

    const Read alone = read(line);
    if (alone.events.size() > 1) std::abort();
    for (const Seen& e : alone.events)
        if (e.line != 1) std::abort();

    // The same line, no longer the last one.
    std::string text(line);
    text += '\n';
    text += kGood;
    text += '\n';
    const Read followed = read(text);
    if (!alone.summary) {
        // Binary data is binary wherever it is; a first event before time 0
        // leaves the log undated wherever it is followed.
        if (followed.summary) std::abort();
    } else if (alone.summary->torn_last_line) {
        // A last line that is not an event is torn; before the last, corrupt.
        // (Pieces around NUL bytes are torn lines wherever they are.)
        if (followed.summary) std::abort();
        if (followed.error.find(", line 1: ") == std::string::npos) std::abort();
    } else {
        if (!followed.summary) std::abort();
        if (followed.events.size() != alone.events.size() + 1) std::abort();
        if (!alone.events.empty() && followed.events.front() != alone.events.front()) std::abort();
        if (followed.events.back().line != 2 || followed.events.back().tid != 8) std::abort();
        if (unknown_count(*followed.summary) != unknown_count(*alone.summary)) std::abort();
        if (followed.summary->torn_lines != alone.summary->torn_lines) std::abort();
    }
    if (line.find('\0') == std::string_view::npos) compare_with_nlohmann(line);
    return 0;
}
