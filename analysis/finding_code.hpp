// FindingCode: what a finding is about, one value per verdict a check can
// reach. Checks set it, the analyzer orders and combines by it, reports
// switch on it; its string (to_string) is the stable identifier scripts and
// CI match on, documented in docs/report-json.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace stacksage {

enum class FindingCode : std::uint8_t {
    // In the order findings of one node and severity are listed (analyzer.cpp).
    IncompleteRecording,       // ranks or hosts of the job that left no log (an error: the analysis is partial)
    AllocatedNodeUnused,       // a node of the batch allocation that ran no rank
    OverloadedResources,       // CPUs demanded by more busy threads than they can run
    OverloadedReservation,     // flow-centric: more threads than the CPUs they may use
    IdleResources,             // cores no active flow may use
    UnderloadedReservation,    // flow-centric: fewer threads than the cores they may use
    RuntimeContention,         // two runtimes alive at once on the same over-subscribed CPUs
    SharedResources,           // CPUs flows of several processes may use at one moment
    SmtSharedCores,            // threads sharing a core through its hardware threads
    SmtUnusedHardwareThreads,  // busy cores of which only one hardware thread is used
    ServiceFlows,              // the node's service flows
    RuntimeStacking,           // a pair of runtimes' temporal/spatial configuration
    // Sampling only; listed after the others, in the order the checks found them.
    NumaRemoteAccess,          // threads fed mostly from a remote NUMA node
    NumaSerialFirstTouch,      // one thread first touched the pages all use
    RanOutsideAffinity,        // threads seen on CPUs their masks did not allow
    ThreadMigrations,          // threads that moved between CPUs while running
    // Listed first of a node's warnings (analyzer.cpp), added last here.
    CpuQuotaThrottled,         // the cgroup's CPU quota held the job's threads back
    // What the recording of a process misses (recording_gaps_check.hpp).
    LogEndsEarly,              // a log stops before its process's end (an error: the analysis is partial)
    UntracedThreads,           // threads the recorder never saw created did work
    // Told while the job ran (live_warning_check.hpp).
    LiveWarning,               // a warning the live watcher gave while the job ran (Info)
    // Only with a fabric (report --network) or Slurm's switch tree: run-wide, listed last.
    NetworkSpread,             // the job's nodes under more leaf switches than they need
};

inline constexpr FindingCode kLastFindingCode = FindingCode::NetworkSpread;

// \return the code's stable identifier ("overloaded-resources", ...).
std::string_view to_string(FindingCode code);

// \return the code whose identifier is `text`; std::nullopt for any other text.
std::optional<FindingCode> finding_code_from_string(std::string_view text);

}  // namespace stacksage
