// Reading one event log written by the preload (OUT/<host>/*.jsonl).
//
// The log is JSON Lines (docs/event-log.md, core/formats/event_schema.hpp):
// one object per line, each with "v" (schema version), "ev" (event name), "t"
// (CLOCK_MONOTONIC ns), "pid" and "tid". What real runs leave behind is
// tolerated:
//  - a torn last line (the process was killed in the middle of a write, or
//    the disk filled up): ignored, and said in the summary;
//  - NUL bytes (the recorder writes through a file mapping: a killed
//    process leaves the unused end of its file zero-filled, and lines other
//    threads were copying at that moment with NULs in them): NUL runs are
//    skipped and the pieces of torn lines around them ignored and counted;
//  - events this reader does not know (a newer recorder): counted by name
//    and skipped;
//  - a newer schema version: read as far as the fields this reader knows.
// Anything else (a line before the last that is not a JSON object, an event
// without its common fields, a file that is not text) makes the file corrupt.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "core/formats/event_schema.hpp"
#include "core/result.hpp"
#include "parsers/json_document.hpp"

namespace stacksage {

// Newest event-log schema version this reader was written for.
inline constexpr int kEventLogSchemaVersion = event_schema::kVersion;

// One complete event. Valid only during the callback.
struct EventLogEvent {
    event_schema::EventKind kind = event_schema::EventKind::unknown;  // never unknown in a callback
    std::string_view name;      // "thread_start", ...
    int version = 0;            // "v"
    std::int64_t t = 0;         // CLOCK_MONOTONIC, ns
    std::int64_t pid = 0;
    std::int64_t tid = 0;
    bool truncated = false;     // the recorder could not fit the event in a line
    std::size_t line = 0;       // 1-based line number
    const JsonDocument* doc = nullptr;  // the whole line, for event-specific fields
};

struct EventLogSummary {
    std::size_t lines = 0;          // complete lines read
    std::size_t events = 0;         // events handed to the callback
    bool torn_last_line = false;    // a last line that is not a complete event was ignored
    // Pieces of lines cut by NUL bytes (a process killed while other threads
    // were copying their lines into the log's mapping): ignored.
    std::size_t torn_lines = 0;
    std::size_t truncated_events = 0;
    // Events whose "t" is negative (the recorder writes CLOCK_MONOTONIC
    // nanoseconds, never negative): skipped, so that no time difference
    // in the analysis can overflow. A negative first event is an error
    // instead: it dates the whole log.
    std::size_t negative_time_events = 0;
    // Events whose "pid" or "tid" is 0 or negative (the recorder writes the
    // kernel's ids, always positive): skipped. In the first event it is an
    // error instead: the process would have no identity.
    std::size_t invalid_id_events = 0;
    // The file ends in NUL bytes: the unused tail of the recorder's mapping,
    // which its end (exit, exec, a fatal signal it caught) truncates away; a
    // process killed outright (SIGKILL, the OOM killer) leaves it.
    bool unfinished_tail = false;
    int newest_version = 0;         // highest "v" seen
    std::map<std::string, std::size_t, std::less<>> unknown_events;  // name -> count, skipped
};

// True for the events of the schema (the ones this reader hands on).
bool is_known_event(std::string_view name);

// Reads the log at path and calls on_event for every known event, in file
// order. The callback sees events of a corrupt file up to the bad line: a
// caller that wants all or nothing collects them and commits on success.
//
// \return the summary.
// \return an Error "<path>: <what>, line N: <why>; the file is skipped" when
//         the file cannot be read or is corrupt (see above).
Result<EventLogSummary> read_event_log(const std::string& path,
                                       const std::function<void(const EventLogEvent&)>& on_event);

// As read_event_log, on text already in memory (tests, other sources);
// name is used in messages.
Result<EventLogSummary> parse_event_log(std::string_view text, const std::string& name,
                                        const std::function<void(const EventLogEvent&)>& on_event);

}  // namespace stacksage
