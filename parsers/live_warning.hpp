// The live watcher's warnings (docs/event-log.md, live_warning): read from a
// process's log, and kept in the run model on the Process that gave them,
// one set of attributes per condition (run_keys::live_*_prefix + condition),
// for analysis/live_warning_check.hpp to show in the report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "parsers/event_log_reader.hpp"

namespace stacksage {

class Model;

struct LiveWarning {
    std::string condition;  // "oversubscribed", "idle_cores", "cpu_throttled"
    std::string source;     // "watcher", "mpi_init"
    std::int64_t t = 0;     // when it was given (the host's CLOCK_MONOTONIC, ns)
    std::int64_t since = 0; // since when the condition held
    std::string cpus;       // "0-3"
    std::int64_t threads = -1;
    std::int64_t allowed_cpus = -1;
    std::string what;       // the condition in words, with its figures
    std::string fix;
    std::string message;    // the line, without "stacksage: "
    bool said = true;       // false: recorded only (-q)
};

// The warning a live_warning event holds; nullopt when it lacks its condition.
std::optional<LiveWarning> live_warning_from(const EventLogEvent& ev);

// Puts a process's warnings on its Process component (a later one of the
// same condition, after exec, wins).
void add_live_warnings(Model& m, ComponentId process, const std::vector<LiveWarning>& warnings);

}  // namespace stacksage
