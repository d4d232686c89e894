// Finding: one thing a check decided about a run.
//
// Checks produce findings; reports only render them (DESIGN.md: a report
// never re-derives what a check decided, a check never formats a report).
// The message and suggestion are complete sentences the check wrote from
// its own numbers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/finding_code.hpp"
#include "analysis/remedy.hpp"
#include "core/cpuset.hpp"

namespace stacksage {

enum class Severity : std::uint8_t { Info = 0, Warning = 1, Error = 2 };

std::string_view to_string(Severity severity);

struct FlowRef {
    std::string host;
    std::int64_t rank = -1;  // -1: the process has no rank
    std::int64_t pid = 0;
    std::int64_t tid = 0;
    std::string runtime;     // "GNU OpenMP", "application", ...
};

struct Finding {
    FindingCode code = FindingCode::OverloadedResources;  // every check sets it; to_string: "overloaded-resources", ...
    Severity severity = Severity::Info;
    std::string check;       // the check(s) that decided it: "resource-centric", ...
    std::string node;        // host name; "" for run-wide findings
    Cpuset resources;        // the CPUs (PUs) concerned
    std::vector<FlowRef> flows;  // the flows concerned, at most kMaxFlowRefs of them
    std::size_t flow_count = 0;  // how many flows are concerned in all
    std::string message;     // the verdict, one line
    std::string detail;      // the numbers behind it; "" when the message says it all
    std::string suggestion;  // "" when there is nothing to change
    Remedy remedy;           // the suggestion as data; empty when it cannot be put so
    // Figures behind the message, for scripts and for the suggestion step:
    // name -> value ("threads": 32, "cores": 9, ...).
    std::vector<std::pair<std::string, std::int64_t>> figures;
    // Ranks and hosts the finding names that no recorded process stands for
    // (incomplete-recording: those that left no log; allocated-node-unused:
    // the idle nodes): at most kMaxListedRanks ranks, figures keep the counts.
    std::vector<std::int64_t> ranks;
    std::vector<std::string> hosts;

    std::int64_t figure(std::string_view name, std::int64_t fallback = -1) const;
};

// Findings list at most this many flows; flow_count keeps the total. A node
// with a thousand over-subscribed threads is one finding, not a megabyte.
inline constexpr std::size_t kMaxFlowRefs = 64;
inline constexpr std::size_t kMaxListedRanks = 4096;

}  // namespace stacksage
