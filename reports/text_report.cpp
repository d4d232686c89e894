#include "reports/text_report.hpp"
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

// "n02-n64" for consecutive names with one prefix and one number width;
// otherwise a list, shortened.
std::string compact_hosts(const std::vector<std::string>& hosts) {
    if (hosts.size() == 1) return hosts.front();
    auto split = [](const std::string& h) {
        std::size_t d = h.size();
        while (d > 0 && h[d - 1] >= '0' && h[d - 1] <= '9') --d;
        return std::pair<std::string, std::string>(h.substr(0, d), h.substr(d));
    };
    const auto [prefix, first_digits] = split(hosts.front());
    bool consecutive = !first_digits.empty() && first_digits.size() <= 18;
    for (std::size_t i = 1; consecutive && i < hosts.size(); ++i) {
        const auto [p, d] = split(hosts[i]);
        const auto [pp, pd] = split(hosts[i - 1]);
        consecutive = p == prefix && d.size() == first_digits.size() && !d.empty() &&
                      std::stoll(d) == std::stoll(pd) + 1;
    }
    if (consecutive) return hosts.front() + "-" + hosts.back();
    std::string out;
    for (std::size_t i = 0; i < hosts.size() && i < 6; ++i) out += (i ? ", " : "") + hosts[i];
    if (hosts.size() > 6) out += ", ... (" + std::to_string(hosts.size()) + " nodes)";
    return out;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
        s.replace(at, from.size(), to);
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
           (p.rank >= 0 ? "r" : "p");
}

std::string cpus_text(const Cpuset& cpus) {
    return (cpus.count() == 1 ? "cpu " : "cpus ") + cpus.to_list_string();
}

// Folded processes placed on different CPUs: which ones went where, one
// entry per distinct placement in order of first appearance ("ranks 0,2 on
// cpu 0; ranks 1,3 on cpu 1"), so that a reader sees who shares a core.
// `printed` names the processes (ranks or pids); `signature` names them by
// their position in the group, so that nodes with the same placement under
// other rank numbers still fold.
struct Placements {
    std::string printed, signature;
};
Placements placements_text(const std::vector<const ProcessSummary*>& group) {
    constexpr std::size_t kMaxListed = 8;
    std::vector<Cpuset> sets;
    std::vector<std::vector<std::int64_t>> names, positions;
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
            positions.emplace_back();
        }
        names[at].push_back(p.rank >= 0 ? p.rank : p.pid);
        positions[at].push_back(static_cast<std::int64_t>(k));
    }
    const bool ranks = group.front()->rank >= 0;
    // Every one on CPUs of its own: say that none share, and list them when they fit.
    const bool none_shared = sets.size() == group.size() && total == together.count();
    if (none_shared && sets.size() > kMaxListed) {
        const std::string s = "none shared, together cpu(s) [" + together.to_list_string() + "]";
        return {s, s};
    }
    Placements out;
    if (none_shared) out.printed = out.signature = "none shared: ";
    for (std::size_t i = 0; i < sets.size() && i < kMaxListed; ++i) {
        const std::string where = " on " + cpus_text(sets[i]);
        const char* who = ranks ? (names[i].size() == 1 ? "rank " : "ranks ") : (names[i].size() == 1 ? "pid " : "pids ");
        out.printed += (i ? "; " : "") + std::string(who) + compact_numbers(names[i]) + where;
        out.signature += (i ? "; #" : "#") + compact_numbers(positions[i]) + where;
    }
    if (sets.size() > kMaxListed) {
        const std::string more = "; ... (" + std::to_string(sets.size() - kMaxListed) +
                                 " more placements), together cpu(s) [" + together.to_list_string() + "]";
        out.printed += more;
        out.signature += more;
    }
    return out;
}

struct NodeText {
    std::vector<std::string> lines;      // as printed
    std::vector<std::string> signature;  // the same, without ranks, pids and host name
    std::vector<std::int64_t> ranks;
};

NodeText render_node_body(const AnalysisResult& a, const NodeSummary& node, const TextReportOptions& o,
                          const Styler& style) {
    NodeText out;
    const std::string indent = "      ";
    // Processes, consecutive equal ones folded.
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
            if (p.rank >= 0) out.ranks.push_back(p.rank);
        }
        const std::string rt = runtimes_text(first);
        const std::string tail = rt.empty() ? "" : " — " + rt;
        std::string line, signature;
        if (j - i == 1) {
            const std::string who = first.rank >= 0 ? "Rank " + std::to_string(first.rank) + " (pid " + std::to_string(first.pid) + ")"
                                                    : "Process " + first.name + " (pid " + std::to_string(first.pid) + ")";
            const std::string what = " created " + created_text(first) + " on cpu(s) [" + first.cpus.to_list_string() + "]" + tail;
            line = who + what;
            signature = (first.rank >= 0 ? "Rank" : "Process " + first.name) + what;
        } else {
            const std::size_t n = j - i;
            const std::string who = first.rank >= 0 ? "Ranks " + compact_numbers(ranks) + " (" + std::to_string(n) + " processes)"
                                                    : "Processes " + first.name + " (" + std::to_string(n) + ", pids " + compact_numbers(pids) + ")";
            const std::string what = " each created " + created_text(first);
            std::string where, where_signature;
            if (same_cpus) {
                where = where_signature = " on cpu(s) [" + first.cpus.to_list_string() + "]";
            } else {
                const Placements placed = placements_text(group);
                const std::string each = " on " + plural(first.cpus.count(), "cpu", "cpus") + " each: ";
                where = each + placed.printed;
                where_signature = each + placed.signature;
            }
            line = who + what + where + tail;
            signature = (first.rank >= 0 ? "Ranks x" + std::to_string(n) : "Processes " + first.name + " x" + std::to_string(n)) +
                        what + where_signature + tail;
        }
        out.lines.push_back(indent + terminal_safe(line));
        out.signature.push_back(signature);
        i = j;
    }
    for (std::size_t i : node.launchers) {
        const ProcessSummary& p = a.processes[i];
        const std::string what = " with " + threads_text(p) + " started the job; not checked";
        out.lines.push_back(indent + terminal_safe("Launcher " + p.name + " (pid " + std::to_string(p.pid) + ")" + what));
        out.signature.push_back("Launcher " + p.name + what);
    }
    for (const Finding& f : a.findings) {
        if (f.node != node.host) continue;
        if (f.severity == Severity::Info && !o.show_info) continue;
        std::vector<std::string> block = {indent + style.tag(f.severity) + " " + terminal_safe(f.message)};
        std::vector<std::string> plain = {std::string(to_string(f.severity)) + " " + f.message};
        if (!f.detail.empty()) {
            block.push_back(indent + "   " + terminal_safe(f.detail));
            plain.push_back(f.detail);
        }
        if (!f.suggestion.empty()) {
            block.push_back(indent + "   " + style.bold("suggestion:") + " " + terminal_safe(f.suggestion));
            plain.push_back("suggestion: " + f.suggestion);
        }
        for (auto& l : block) out.lines.push_back(std::move(l));
        for (auto& l : plain) {
            replace_all(l, node.host, "\x01");
            out.signature.push_back(std::move(l));
        }
    }
    return out;
}

std::string node_header_tail(const NodeSummary& n) {
    std::string s = ": " + plural(n.cores_available, "core", "cores");
    if (n.smt) s += " (" + plural(n.cpus_available, "hardware thread", "hardware threads") + ")";
    s += " available";
    if (n.job_restricted) s += " (job-restricted: " + std::to_string(n.cpus_available) + " of the node's " +
                               std::to_string(n.cpus_total) + " cpus)";
    s += ", " + plural(n.processes.size(), "process", "processes") + " created.";
    if (n.topology_source != "hwloc") s += " (no topology file: rebuilt from the cpusets seen)";
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

    // Nodes, consecutive identical ones folded into the last one printed.
    std::size_t reference = 0;
    std::vector<std::string> reference_signature;
    std::vector<std::string> folded;
    std::vector<std::int64_t> folded_ranks;
    auto flush = [&] {
        if (folded.empty()) return;
        out += "+ " + std::string(folded.size() == 1 ? "Node " : "Nodes ") + terminal_safe(compact_hosts(folded)) +
               ": same as " + terminal_safe(a.nodes[reference].host);
        if (!folded_ranks.empty()) out += " (ranks " + compact_numbers(folded_ranks) + ")";
        out += ".\n";
        folded.clear();
        folded_ranks.clear();
    };
    for (std::size_t n = 0; n < a.nodes.size(); ++n) {
        const NodeSummary& node = a.nodes[n];
        NodeText body = render_node_body(a, node, o, style);
        std::vector<std::string> signature = body.signature;
        signature.insert(signature.begin(), node_header_tail(node));
        if (n > 0 && signature == reference_signature) {
            folded.push_back(node.host);
            folded_ranks.insert(folded_ranks.end(), body.ranks.begin(), body.ranks.end());
            continue;
        }
        flush();
        reference = n;
        reference_signature = std::move(signature);
        out += "+ Node " + style.bold(terminal_safe(node.host)) + node_header_tail(node) + "\n";
        for (const std::string& l : body.lines) out += l + "\n";
    }
    flush();

    // Findings about no node in particular.
    for (const Finding& f : a.findings) {
        if (!f.node.empty()) continue;
        if (f.severity == Severity::Info && !o.show_info) continue;
        out += style.tag(f.severity) + " " + terminal_safe(f.message) + "\n";
        if (!f.suggestion.empty()) out += "   suggestion: " + terminal_safe(f.suggestion) + "\n";
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
