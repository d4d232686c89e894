#include "analysis/recording_gaps_check.hpp"

#include <map>

#include "analysis/flow_refs.hpp"
#include "analysis/node_load.hpp"
#include "core/plural.hpp"

namespace stacksage {

std::string log_ends_early_reason(std::string_view cause, std::string_view stop_error) {
    if (cause == "killed")
        return "the process was killed before its end could be recorded (SIGKILL, the OOM killer: the log keeps the "
               "zero-filled tail the recorder removes at every end it sees)";
    if (cause == "log-stopped")
        return "the log stopped recording before the process ended (" +
               (stop_error.empty() ? std::string("it could not be written") : std::string(stop_error)) +
               ": a full disk or a file-size limit)";
    return "the log holds no end of the process (killed, or written by an older recorder)";
}

namespace {

std::int64_t us_to_ns(std::int64_t us) { return us > INT64_MAX / 1000 ? INT64_MAX : us * 1000; }

std::string who(const ProcessView& p) {
    return (p.rank >= 0 ? "rank " + std::to_string(p.rank) + " (pid " + std::to_string(p.pid) + ")"
                        : std::string(p.name) + " (pid " + std::to_string(p.pid) + ")");
}

std::string list_of(const RunView& view, const std::vector<std::uint32_t>& processes, std::size_t max = 8) {
    std::string out;
    for (std::size_t i = 0; i < processes.size() && i < max; ++i)
        out += (i ? ", " : "") + who(view.processes[processes[i]]);
    if (processes.size() > max) out += ", ... (" + std::to_string(processes.size()) + " in all)";
    return out;
}

std::vector<Finding> logs_ending_early(const RunView& view) {
    std::vector<Finding> out;
    for (const NodeView& node : view.nodes) {
        // By cause, in a fixed order.
        std::map<std::string_view, std::vector<std::uint32_t>> by_cause;
        for (std::uint32_t i : node.processes)
            if (!view.processes[i].log_ends_early.empty())
                by_cause[view.processes[i].log_ends_early].push_back(i);
        for (const auto& [cause, processes] : by_cause) {
            const ProcessView& first = view.processes[processes.front()];
            Finding f;
            f.code = FindingCode::LogEndsEarly;
            f.severity = Severity::Error;
            f.check = "completeness";
            f.node = std::string(node.host);
            const bool one = processes.size() == 1;
            f.message = (one ? "The log of " + who(first) + " ends early"
                             : "The logs of " + std::to_string(processes.size()) + " processes (" +
                                   list_of(view, processes) + ") end early") +
                        ": " + log_ends_early_reason(cause, first.log_stop_error) +
                        "; what came after is missing and the findings below cover only what was recorded";
            std::string detail;
            std::vector<std::uint32_t> flows;
            for (std::size_t k = 0; k < processes.size(); ++k) {
                const ProcessView& p = view.processes[processes[k]];
                if (!p.flows.empty()) flows.push_back(p.flows.front());
                if (k >= 8) continue;
                // A stopped log's end is the process's (log_stopped is written there);
                // a killed one's is its last event.
                const std::string lived = seconds_text(p.end_ns > p.start_ns ? p.end_ns - p.start_ns : 0);
                const std::string threads = plural(p.flows.empty() ? 0 : p.flows.size() - 1, "thread", "threads");
                detail += (detail.empty() ? "" : "; ") + who(p) +
                          (cause == "log-stopped" ? " ran " + lived + ", " + threads + " recorded before the log stopped"
                                                  : " recorded for " + lived + ", " + threads + " created by then");
            }
            f.detail = detail;
            f.suggestion = cause == "log-stopped"
                               ? "record into a directory with room (df on it; stacksage run -o DIR), or raise the "
                                 "file-size limit (ulimit -f), then run again"
                               : "find what ended it (the OOM killer in dmesg, the batch system's time or memory "
                                 "limit, a kill -9), then run again to record it whole";
            f.figures = {{"processes", static_cast<std::int64_t>(processes.size())}};
            attach_flows(f, view, flows);
            out.push_back(std::move(f));
        }
    }
    return out;
}

std::vector<Finding> untraced_threads(const RunView& view) {
    std::vector<Finding> out;
    for (const NodeView& node : view.nodes) {
        std::vector<std::uint32_t> flows;
        std::size_t alive = 0;
        std::int64_t alive_cpu_us = 0, unseen_cpu_us = 0;
        std::vector<std::uint32_t> processes;
        for (std::uint32_t i : node.processes) {
            bool any = false;
            for (std::uint32_t f : view.processes[i].flows) {
                const FlowView& flow = view.flows[f];
                const bool unseen = flow.kind == FlowKind::Unseen;
                if (!flow.untraced && !unseen) continue;
                any = true;
                flows.push_back(f);
                const std::int64_t cpu = std::max<std::int64_t>(0, flow.cpu_time_us);
                if (unseen) {
                    unseen_cpu_us = add_saturating(unseen_cpu_us, cpu);
                } else {
                    ++alive;
                    alive_cpu_us = add_saturating(alive_cpu_us, cpu);
                }
            }
            if (any) processes.push_back(i);
        }
        if (flows.empty()) continue;
        Finding f;
        f.code = FindingCode::UntracedThreads;
        f.severity = Severity::Info;
        f.check = "completeness";
        f.node = std::string(node.host);
        std::string what;
        if (alive > 0)
            what = plural(alive, "thread", "threads") + " alive at the end (" +
                   seconds_text(us_to_ns(alive_cpu_us)) + " of CPU time)";
        if (unseen_cpu_us > 0)
            what += (what.empty() ? "" : " and ") + std::string("threads that ended unseen (") +
                    seconds_text(us_to_ns(unseen_cpu_us)) + " of CPU time)";
        f.message = list_of(view, processes) + " ran threads the recorder did not see created: " + what +
                    "; their CPU time is counted as load";
        f.detail = "glibc creates threads of its own for timer_create and aio_* with SIGEV_THREAD (the notification "
                   "runs on them), beside the recorder's pthread_create; so does a raw clone(CLONE_THREAD). Those "
                   "alive at the end were found in the kernel's task list; the work of those that ended before is "
                   "the process's CPU time no recorded thread accounts for, taken to run where the main thread "
                   "may";
        f.figures = {{"threads_alive", static_cast<std::int64_t>(alive)},
                     {"alive_cpu_ms", alive_cpu_us / 1000},
                     {"unseen_cpu_ms", unseen_cpu_us / 1000}};
        attach_flows(f, view, flows);
        out.push_back(std::move(f));
    }
    return out;
}

}  // namespace

std::vector<Finding> check_recording_gaps(const RunView& view) {
    std::vector<Finding> out = logs_ending_early(view);
    for (Finding& f : untraced_threads(view)) out.push_back(std::move(f));
    return out;
}

}  // namespace stacksage
