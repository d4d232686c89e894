#include "reports/text_report.hpp"
#include "reports/network_report.hpp"
#include "reports/memory_heatmap_text.hpp"
#include "reports/terminal_text.hpp"
#include "core/plural.hpp"

#include <algorithm>
#include <set>

namespace stacksage {

namespace {

// "0-3,7,9-10" from sorted, distinct numbers.
std::string compact_numbers(std::vector<std::int64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    std::string out;
    for (std::size_t i = 0; i < v.size();) {
        std::size_t j = i;
        while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(v[i]);
        if (j > i) out += "-" + std::to_string(v[j]);
        i = j + 1;
    }
    return out;
}

struct Styler {
    bool color;
    std::string tag(Severity s) const {
        const char* text = s == Severity::Error ? "## ERROR ##" : s == Severity::Warning ? "## WARNING ##" : "## INFO ##";
        if (!color) return text;
        const char* code = s == Severity::Error ? "\033[1;31m" : s == Severity::Warning ? "\033[1;33m" : "\033[36m";
        return std::string(code) + text + "\033[0m";
    }
    std::string bold(const std::string& s) const { return color ? "\033[1m" + s + "\033[0m" : s; }
};

std::string runtimes_text(const ProcessSummary& p) {
    const bool only_application = p.runtimes.size() == 1 && p.runtimes.front().family == RuntimeFamily::Application;
    if (only_application && p.category == kNoStacking()) return {};
    std::string out;
    for (const RuntimeUse& r : p.runtimes) out += (out.empty() ? "" : ", ") + r.name + " " + std::to_string(r.flows);
    return out + "; " + p.category;
}

// What follows "created": the threads the process created, the main thread
// not counted, and the total with it, so that the line agrees with findings
// that count every thread ("3 threads of 1 process may use ...").
std::string created_text(const ProcessSummary& p) {
    std::string s = p.created_threads == 0 ? "no threads" : plural(p.created_threads, "thread", "threads");
    std::string aside = p.created_threads == 0 ? "only the main thread"
                        : p.threads > p.created_threads
                            ? std::to_string(p.threads) + " with the main thread"
                            : "";
    if (p.service_threads > 0)
        aside += (aside.empty() ? "" : "; ") + std::to_string(p.service_threads) + " service";
    return aside.empty() ? s : s + " (" + aside + ")";
}

// What the recording of the process misses, after its placement: "; its
// log ends early (killed)", "; 1 thread glibc or a raw clone created unseen
// was alive at its end; threads that ended unseen used 0.65 s of CPU".
std::string gaps_text(const ProcessSummary& p) {
    std::string s;
    if (p.untraced_threads > 0)
        s += "; " + plural(p.untraced_threads, "thread", "threads") + " created unseen (glibc's own, a raw clone) " +
             (p.untraced_threads == 1 ? "was" : "were") + " alive at its end";
    if (p.unseen_cpu_us > 0)
        s += "; threads that ended unseen used " + seconds_text(p.unseen_cpu_us > INT64_MAX / 1000 ? INT64_MAX : p.unseen_cpu_us * 1000) +
             " of CPU";
    if (p.log_ends_early == "killed") s += "; its log ends early (killed before its end was recorded)";
    else if (p.log_ends_early == "log-stopped") s += "; its log ends early (the log stopped recording)";
    else if (!p.log_ends_early.empty()) s += "; its log ends early (no end recorded)";
    return s;
}

// Launchers: every thread they had, the main one included.
std::string threads_text(const ProcessSummary& p) {
    std::string s = plural(p.threads, "thread", "threads");
    if (p.service_threads > 0) s += " (" + std::to_string(p.service_threads) + " service)";
    return s;
}

// What makes two processes print the same line, ranks and pids aside.
std::string process_signature(const ProcessSummary& p) {
    return p.name + "|" + std::to_string(p.threads) + "|" + std::to_string(p.created_threads) + "|" +
           std::to_string(p.service_threads) + "|" + std::to_string(p.cpus.count()) + "|" + runtimes_text(p) + "|" +
           gaps_text(p) + "|" +
           (p.rank >= 0 ? "r" : "p");
}

std::string cpus_text(const Cpuset& cpus) {
    return (cpus.count() == 1 ? "cpu " : "cpus ") + cpus.to_list_string();
}

// Folded processes placed on different CPUs: which ones went where, one
// entry per distinct placement in order of first appearance ("ranks 0,2 on
// cpu 0; ranks 1,3 on cpu 1"), so that a reader sees who shares a core.
std::string placements_text(const std::vector<const ProcessSummary*>& group) {
    constexpr std::size_t kMaxListed = 8;
    std::vector<Cpuset> sets;
    std::vector<std::vector<std::int64_t>> names;
    std::size_t total = 0;
    Cpuset together;
    for (std::size_t k = 0; k < group.size(); ++k) {
        const ProcessSummary& p = *group[k];
        total += p.cpus.count();
        together |= p.cpus;
        std::size_t at = 0;
        while (at < sets.size() && !(sets[at] == p.cpus)) ++at;
        if (at == sets.size()) {
            sets.push_back(p.cpus);
            names.emplace_back();
        }
        names[at].push_back(p.rank >= 0 ? p.rank : p.pid);
    }
    const bool ranks = group.front()->rank >= 0;
    // Every one on CPUs of its own: say that none share, and list them when they fit.
    const bool none_shared = sets.size() == group.size() && total == together.count();
    if (none_shared && sets.size() > kMaxListed)
        return "none shared, together cpu(s) [" + together.to_list_string() + "]";
    std::string out;
    if (none_shared) out = "none shared: ";
    for (std::size_t i = 0; i < sets.size() && i < kMaxListed; ++i) {
        const std::string where = " on " + cpus_text(sets[i]);
        const char* who = ranks ? (names[i].size() == 1 ? "rank " : "ranks ") : (names[i].size() == 1 ? "pid " : "pids ");
        out += (i ? "; " : "") + std::string(who) + compact_numbers(names[i]) + where;
    }
    if (sets.size() > kMaxListed) {
        out += "; ... (" + std::to_string(sets.size() - kMaxListed) + " more placements), together cpu(s) [" +
               together.to_list_string() + "]";
    }
    return out;
}

// The lines of a node: its processes (consecutive equal ones folded), its
// launchers and, with_findings, its findings.
std::vector<std::string> render_node_body(const AnalysisResult& a, const NodeSummary& node, const TextReportOptions& o,
                                          const Styler& style, bool with_findings = true) {
    std::vector<std::string> out;
    const std::string indent = "      ";
    for (std::size_t i = 0; i < node.processes.size();) {
        const ProcessSummary& first = a.processes[node.processes[i]];
        const std::string sig = process_signature(first);
        std::size_t j = i + 1;
        while (j < node.processes.size() && process_signature(a.processes[node.processes[j]]) == sig) ++j;
        std::vector<std::int64_t> ranks, pids;
        std::vector<const ProcessSummary*> group;
        bool same_cpus = true;
        for (std::size_t k = i; k < j; ++k) {
            const ProcessSummary& p = a.processes[node.processes[k]];
            if (p.rank >= 0) ranks.push_back(p.rank);
            pids.push_back(p.pid);
            group.push_back(&p);
            if (!(p.cpus == first.cpus)) same_cpus = false;
        }
        const std::string rt = runtimes_text(first);
        const std::string tail = rt.empty() ? "" : " — " + rt;
        std::string line;
        if (j - i == 1) {
            const std::string who = first.rank >= 0 ? "Rank " + std::to_string(first.rank) + " (pid " + std::to_string(first.pid) + ")"
                                                    : "Process " + first.name + " (pid " + std::to_string(first.pid) + ")";
            line = who + " created " + created_text(first) + " on cpu(s) [" + first.cpus.to_list_string() + "]" +
                   gaps_text(first) + tail;
        } else {
            const std::size_t n = j - i;
            const std::string who = first.rank >= 0 ? "Ranks " + compact_numbers(ranks) + " (" + std::to_string(n) + " processes)"
                                                    : "Processes " + first.name + " (" + std::to_string(n) + ", pids " + compact_numbers(pids) + ")";
            const std::string where =
                same_cpus ? " on cpu(s) [" + first.cpus.to_list_string() + "]"
                          : " on " + plural(first.cpus.count(), "cpu", "cpus") + " each: " + placements_text(group);
            line = who + " each created " + created_text(first) + where + gaps_text(first) + tail;
        }
        out.push_back(indent + terminal_safe(line));
        i = j;
    }
    for (std::size_t i : node.launchers) {
        const ProcessSummary& p = a.processes[i];
        out.push_back(indent + terminal_safe("Launcher " + p.name + " (pid " + std::to_string(p.pid) + ") with " +
                                             threads_text(p) + " started the job; not checked"));
    }
    for (const Finding& f : a.findings) {
        if (!with_findings || f.node != node.host) continue;
        if (f.severity == Severity::Info && !o.show_info) continue;
        out.push_back(indent + style.tag(f.severity) + " " + terminal_safe(f.message));
        if (!f.detail.empty()) out.push_back(indent + "   " + terminal_safe(f.detail));
        if (!f.suggestion.empty())
            out.push_back(indent + "   " + style.bold("suggestion:") + " " + terminal_safe(f.suggestion));
    }
    return out;
}

// The launchers of a launch host, by name: "mpirun", "mpirun, ssh".
std::string launcher_names(const AnalysisResult& a, const NodeSummary& n) {
    std::vector<std::string> names;
    for (std::size_t i : n.launchers) {
        const ProcessSummary& p = a.processes[i];
        const std::string name = p.launcher_name.empty() ? p.name : p.launcher_name;
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
    std::string out;
    for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
    return out;
}

// "+ Node n01: 16 cores available, ..." or, where only launchers ran,
// "+ Host h0: launch host (mpirun), no application process".
std::string node_word(const NodeSummary& n) { return n.launch_host ? "Host " : "Node "; }

std::string node_header_tail(const AnalysisResult& a, const NodeSummary& n) {
    if (n.launch_host) return ": launch host (" + launcher_names(a, n) + "), no application process";
    std::string s = ": " + plural(n.cores_available, "core", "cores");
    if (n.smt) s += " (" + plural(n.cpus_available, "hardware thread", "hardware threads") + ")";
    s += " available";
    if (n.job_restricted) s += " (job-restricted: " + std::to_string(n.cpus_available) + " of the node's " +
                               std::to_string(n.cpus_total) + " cpus)";
    if (n.cpu_quota > 0) s += " under a CPU quota of " + describe_cpu_quota(n.cpu_quota);
    s += ", " + plural(n.processes.size(), "process", "processes") + " created.";
    if (n.topology_source == TopologySource::CpusetsSeen) s += " (no topology file: rebuilt from the cpusets seen)";
    return s;
}

}  // namespace

std::string render_text_report(const ReportData& data, const TextReportOptions& o) {
    const AnalysisResult& a = *data.analysis;
    const Styler style{o.color};
    std::string out;
    // Everything from the run (names, paths, commands, messages quoting them)
    // goes through terminal_safe(); only the styling adds escapes.
    if (!a.run_command.empty()) out += "Run: " + terminal_safe(a.run_command) + "\n";
    if (a.launcher.kind != LauncherKind::None)
        out += "Launcher: " + terminal_safe(a.launcher.command) + " (" + std::string(to_string(a.launcher.kind)) + ")\n";

    // Run-wide errors (an incomplete recording) come first: they qualify
    // everything below.
    auto render_run_wide = [&](const Finding& f) {
        out += style.tag(f.severity) + " " + terminal_safe(f.message) + "\n";
        if (!f.detail.empty()) out += "   " + terminal_safe(f.detail) + "\n";
        if (!f.suggestion.empty()) out += "   " + style.bold("suggestion:") + " " + terminal_safe(f.suggestion) + "\n";
    };
    for (const Finding& f : a.findings)
        if (f.node.empty() && f.severity == Severity::Error) render_run_wide(f);

    // Nodes, as the analysis grouped them (analysis/node_groups.hpp): a
    // group of one node in full; a larger one once, under its hosts, with
    // its first node's processes and the group's findings, their figures as
    // ranges over the group.
    const std::string indent = "      ";
    for (const NodeGroup& group : a.node_groups) {
        const NodeSummary& first = a.nodes[group.nodes.front()];
        if (group.nodes.size() == 1) {
            out += "+ " + node_word(first) + style.bold(terminal_safe(first.host)) +
                   terminal_safe(node_header_tail(a, first)) + "\n";
            for (const std::string& l : render_node_body(a, first, o, style)) out += l + "\n";
            continue;
        }
        std::vector<std::int64_t> ranks;
        for (std::size_t n : group.nodes)
            for (std::size_t p : a.nodes[n].processes)
                if (a.processes[p].rank >= 0) ranks.push_back(a.processes[p].rank);
        out += std::string(first.launch_host ? "+ Hosts " : "+ Nodes ") + style.bold(terminal_safe(group.hosts)) + " (" + std::to_string(group.nodes.size()) +
               " nodes" + (ranks.empty() ? "" : ", ranks " + compact_numbers(ranks)) + ")" +
               terminal_safe(node_header_tail(a, first)) + "\n";
        const std::vector<std::string> body = render_node_body(a, first, o, style, false);
        if (!body.empty()) out += indent + "On " + terminal_safe(first.host) + ", the first of them:\n";
        for (const std::string& l : body) out += l + "\n";
        for (const GroupFinding& f : group.findings) {
            if (f.severity == Severity::Info && !o.show_info) continue;
            out += indent + style.tag(f.severity) + " " + terminal_safe(f.message) + "\n";
            if (!f.detail.empty()) out += indent + "   " + terminal_safe(f.detail) + "\n";
            if (!f.suggestion.empty())
                out += indent + "   " + style.bold("suggestion:") + " " + terminal_safe(f.suggestion) + "\n";
        }
    }

    // Findings about no node in particular, and about nodes that left no log
    // (an allocated node left unused: its message names it).
    auto recorded_node = [&](const std::string& host) {
        return std::any_of(a.nodes.begin(), a.nodes.end(), [&](const NodeSummary& n) { return n.host == host; });
    };
    for (const Finding& f : a.findings) {
        if (f.node.empty() ? f.severity == Severity::Error : recorded_node(f.node)) continue;
        if (f.severity == Severity::Info && !o.show_info) continue;
        render_run_wide(f);
    }

    const std::vector<LoadNote>& notes = *data.notes;
    if (!notes.empty()) {
        out += "Input:\n";
        std::size_t shown = 0;
        for (const LoadNote& note : notes) {
            if (shown == o.max_notes) break;
            ++shown;
            const std::string where = note.file.empty() ? "" : terminal_safe(note.file) + ": ";
            if (note.level == LoadNote::Level::Error)
                out += "  " + style.tag(Severity::Error) + " " + where + terminal_safe(note.message) + "\n";
            else
                out += "  " + std::string(to_string(note.level)) + ": " + where + terminal_safe(note.message) + "\n";
        }
        if (notes.size() > shown)
            out += "  ... and " + std::to_string(notes.size() - shown) + " more (see --format json)\n";
        if (data.logs_skipped > 0)
            out += "  " + std::to_string(data.logs_skipped) + " of " + plural(data.logs, "event log", "event logs") +
                   " skipped; the rest is analysed.\n";
    }

    if (data.network != nullptr) out += render_network_text(*data.network);

    if (!a.memory.empty()) {
        HeatmapTextOptions heat;
        heat.color = o.color;
        out += render_memory_heatmaps(a.memory, heat);
    }

    out += "Analysis conclusion: ";
    if (const std::size_t e = a.count(Severity::Error); e > 0) out += std::to_string(e) + " error(s), ";
    out += std::to_string(a.count(Severity::Warning)) + " warning(s)";
    if (data.logs_skipped > 0) out += " (" + plural(data.logs_skipped, "event log", "event logs") + " skipped)";
    out += "\n";
    return out;
}

}  // namespace stacksage
