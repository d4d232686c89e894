#include "parsers/event_log_reader.hpp"

#include "parsers/input_file.hpp"

namespace stacksage {

namespace {

namespace common = event_schema::common;
using event_schema::EventKind;

Error corrupt(const std::string& name, std::size_t line, std::string_view why) {
    return make_error(name + ": corrupt event log, line " + std::to_string(line) + ": " +
                      std::string(why) + "; the file is skipped");
}

// Reads the whole file into `text` (reused between calls: one allocation per
// thread for a whole run of logs, not one per file). Only a regular file of at
// most input_limits::kEventLog bytes is read (input_file.hpp): a FIFO, a
// device or a directory where a log should be is refused, never waited on.
Status read_file(const std::string& path, std::string& text) {
    if (auto problem = read_input_file(path, input_limits::kEventLog, "an event log", text))
        return make_error(path + ": cannot read the event log: " + problem->reason + "; the file is skipped");
    return Ok{};
}

}  // namespace

bool is_known_event(std::string_view name) { return event_schema::event_kind(name) != EventKind::unknown; }

namespace {

Result<EventLogSummary> parse_lines(std::string_view text, const std::string& name,
                                    const std::function<void(const EventLogEvent&)>& on_event, JsonDocument& doc) {
    EventLogSummary summary;
    summary.unfinished_tail = !text.empty() && text.back() == '\0';
    std::size_t line_no = 0;
    bool seen_event = false;  // a line that held a stacksage event, before this one
    std::size_t at = 0;
    while (at < text.size()) {
        std::size_t end = text.find('\n', at);
        const bool has_newline = end != std::string_view::npos;
        if (!has_newline) end = text.size();
        std::string_view line = text.substr(at, end - at);
        at = has_newline ? end + 1 : end;
        ++line_no;
        bool is_last = at >= text.size();
        // NUL bytes: the recorder writes through a file mapping, and a
        // process killed before its exit leaves the unused tail of the file
        // zero-filled, and a line whose copy was cut leaves NULs where its
        // missing bytes would be. Skip every NUL run; the text before the
        // last run is what remains of torn lines, the text after it may be a
        // whole line.
        if (const std::size_t last_nul = line.rfind('\0'); last_nul != std::string_view::npos) {
            for (std::size_t i = 0; i < last_nul;) {
                const std::size_t j = line.find('\0', i);
                const std::string_view piece = line.substr(i, j - i);
                // The recorder escapes every control byte: other ones next to
                // NULs mean a binary file.
                for (const char c : piece)
                    if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r')
                        return corrupt(name, line_no, "binary data (NUL bytes) in the file");
                if (!piece.empty()) ++summary.torn_lines;
                i = j + 1;
            }
            line.remove_prefix(last_nul + 1);
            if (line.empty()) continue;
            for (const char c : line)
                if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\r')
                    return corrupt(name, line_no, "binary data (NUL bytes) in the file");
            // The tail of a line whose start was never copied: torn, wherever it is.
            if (!doc.parse(line) || doc.type(doc.root()) != JsonType::Object ||
                !doc.get_int(common::v) || !doc.get_string(common::ev)) {
                ++summary.torn_lines;
                continue;
            }
            is_last = is_last || text.find_first_not_of('\0', at) == std::string_view::npos;
        } else {
            if (!is_last && text.find_first_not_of(std::string_view("\0", 1), at) == std::string_view::npos)
                is_last = true;  // only NULs follow: the unused tail of a killed process's log
        }
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        // Blank: JSON's white space only (a stray '\r' included), nothing to parse.
        if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
            if (is_last) break;
            continue;  // blank lines carry nothing
        }
        const bool parsed = doc.parse(line);
        if (!parsed || doc.type(doc.root()) != JsonType::Object) {
            if (is_last) {
                summary.torn_last_line = true;
                break;
            }
            if (parsed) return corrupt(name, line_no, "not a JSON object");
            return corrupt(name, line_no,
                           "not JSON (" + std::string(doc.error()) + " at byte " +
                               std::to_string(doc.error_offset() + 1) + ")");
        }
        // A last line that parses but lacks its newline is kept: the write
        // may have stopped exactly before the newline, and the event is whole.
        ++summary.lines;
        EventLogEvent ev;
        ev.line = line_no;
        ev.doc = &doc;
        const auto v = doc.get_int(common::v);
        const auto name_field = doc.get_string(common::ev);
        const auto t = doc.get_int(common::t);
        const auto pid = doc.get_int(common::pid);
        const auto tid = doc.get_int(common::tid);
        if (!v || !name_field || !t || !pid || !tid) {
            if (is_last) {
                summary.torn_last_line = true;
                break;
            }
            return corrupt(name, line_no,
                           "not a stacksage event (one of \"" + std::string(common::v) + "\", \"" +
                               std::string(common::ev) + "\", \"" + std::string(common::t) + "\", \"" +
                               std::string(common::pid) + "\", \"" + std::string(common::tid) +
                               "\" is missing or of the wrong type)");
        }
        if (*t < 0) {
            // The first event dates the whole log (process_start): without
            // it nothing after can be placed, so the file is refused by name.
            if (!seen_event)
                return corrupt(name, line_no,
                               "the first event ('" + std::string(*name_field) + "') has a negative time (" +
                                   std::to_string(*t) + "); the recorder never writes one");
            ++summary.negative_time_events;
            continue;
        }
        if (*pid <= 0 || *tid <= 0) {
            if (!seen_event)
                return corrupt(name, line_no,
                               "the first event ('" + std::string(*name_field) + "') has pid " +
                                   std::to_string(*pid) + " and tid " + std::to_string(*tid) +
                                   "; the recorder writes only positive ones");
            ++summary.invalid_id_events;
            continue;
        }
        seen_event = true;
        ev.version = static_cast<int>(*v);
        ev.name = *name_field;
        ev.t = *t;
        ev.pid = *pid;
        ev.tid = *tid;
        ev.truncated = doc.get_bool(common::truncated).value_or(false);
        if (ev.version > summary.newest_version) summary.newest_version = ev.version;
        if (ev.truncated) ++summary.truncated_events;
        ev.kind = event_schema::event_kind(ev.name);
        if (ev.kind == EventKind::unknown) {
            auto it = summary.unknown_events.find(ev.name);
            if (it == summary.unknown_events.end())
                summary.unknown_events.emplace(std::string(ev.name), 1);
            else
                ++it->second;
            continue;
        }
        ++summary.events;
        on_event(ev);
    }
    return summary;
}

}  // namespace

// Text in memory: one document for the call. (Also what the model writer
// uses at a process's exit, where a thread_local would register a
// destructor after the thread's destructors have run: a leak LeakSanitizer
// reports when exit() runs in a thread other than the main one.)
Result<EventLogSummary> parse_event_log(std::string_view text, const std::string& name,
                                        const std::function<void(const EventLogEvent&)>& on_event) {
    JsonDocument doc;
    return parse_lines(text, name, on_event, doc);
}

Result<EventLogSummary> read_event_log(const std::string& path,
                                       const std::function<void(const EventLogEvent&)>& on_event) {
    // Reused across logs on a thread (the loader's parse threads): their
    // buffers stop growing after the first few logs.
    thread_local std::string text;
    thread_local JsonDocument doc;
    if (Status read = read_file(path, text); !read) return read.error();
    Result<EventLogSummary> summary = parse_lines(text, path, on_event, doc);
    // A huge log should not pin its buffer for the rest of the run.
    if (text.capacity() > (std::size_t{64} << 20)) std::string().swap(text);
    return summary;
}

}  // namespace stacksage
