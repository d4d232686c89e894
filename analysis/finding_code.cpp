#include "analysis/finding_code.hpp"

namespace stacksage {

// The identifiers are a contract (docs/report-json.md lists each one;
// tests/docs/test_finding_codes_documented.sh reads them from this switch).
std::string_view to_string(FindingCode code) {
    switch (code) {
        case FindingCode::IncompleteRecording: return "incomplete-recording";
        case FindingCode::AllocatedNodeUnused: return "allocated-node-unused";
        case FindingCode::OverloadedResources: return "overloaded-resources";
        case FindingCode::OverloadedReservation: return "overloaded-reservation";
        case FindingCode::IdleResources: return "idle-resources";
        case FindingCode::UnderloadedReservation: return "underloaded-reservation";
        case FindingCode::RuntimeContention: return "runtime-contention";
        case FindingCode::SharedResources: return "shared-resources";
        case FindingCode::SmtSharedCores: return "smt-shared-cores";
        case FindingCode::SmtUnusedHardwareThreads: return "smt-unused-hardware-threads";
        case FindingCode::ServiceFlows: return "service-flows";
        case FindingCode::RuntimeStacking: return "runtime-stacking";
        case FindingCode::NumaRemoteAccess: return "numa-remote-access";
        case FindingCode::NumaSerialFirstTouch: return "numa-serial-first-touch";
        case FindingCode::RanOutsideAffinity: return "ran-outside-affinity";
        case FindingCode::ThreadMigrations: return "thread-migrations";
        case FindingCode::CpuQuotaThrottled: return "cpu-quota-throttled";
        case FindingCode::LogEndsEarly: return "log-ends-early";
        case FindingCode::UntracedThreads: return "untraced-threads";
        case FindingCode::LiveWarning: return "live-warning";
        case FindingCode::NetworkSpread: return "network-spread";
    }
    return "unknown";
}

std::optional<FindingCode> finding_code_from_string(std::string_view text) {
    for (int i = 0; i <= static_cast<int>(kLastFindingCode); ++i) {
        const auto code = static_cast<FindingCode>(i);
        if (to_string(code) == text) return code;
    }
    return std::nullopt;
}

}  // namespace stacksage
