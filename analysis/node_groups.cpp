#include "analysis/node_groups.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "analysis/analyzer.hpp"
#include "core/hostlist_format.hpp"

namespace stacksage {

namespace {

// Stand-ins while the members' sentences are compared: a member's own host
// name, and (overloaded resources) its over-demand phrase.
constexpr char kHostMark = '\x01';
constexpr char kOverDemandMark = '\x02';

bool host_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
           c == '.';
}

// The text with every whole-word occurrence of `host` replaced by kHostMark
// (a host "n1" is not the start of "n10", a host "a" not a letter of "at").
std::string mark_host(const std::string& text, const std::string& host) {
    if (host.empty()) return text;
    std::string out;
    std::size_t from = 0;
    for (std::size_t at = text.find(host); at != std::string::npos; at = text.find(host, at + 1)) {
        if (at < from) continue;
        const std::size_t end = at + host.size();
        // A trailing '.' ends a sentence, not the name.
        const bool before = at == 0 || !host_char(text[at - 1]);
        const bool after = end == text.size() || !host_char(text[end]) ||
                           (text[end] == '.' && (end + 1 == text.size() || !host_char(text[end + 1])));
        if (!before || !after) continue;
        out.append(text, from, at - from);
        out += kHostMark;
        from = end;
    }
    out.append(text, from, std::string::npos);
    return out;
}

// The text with the number (or list of numbers, "0-3,5") after "rank",
// "ranks", "pid" or "thread" replaced by '#': each node names its own ranks
// and threads ("Rank 17 was bound by srun"), which must not split nodes
// whose advice is otherwise the same; the group's text gives them as a range.
std::string mark_ids(const std::string& text) {
    static constexpr std::string_view kIdWords[] = {"rank ", "Rank ", "ranks ", "Ranks ", "pid ", "thread "};
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        bool marked = false;
        for (std::string_view w : kIdWords) {
            const bool word_start = i == 0 || !host_char(text[i - 1]);
            if (!word_start || text.compare(i, w.size(), w) != 0) continue;
            std::size_t j = i + w.size();
            if (j >= text.size() || text[j] < '0' || text[j] > '9') continue;
            while (j < text.size() && ((text[j] >= '0' && text[j] <= '9') || text[j] == '-' ||
                                       (text[j] == ',' && j + 1 < text.size() && text[j + 1] >= '0' &&
                                        text[j + 1] <= '9')))
                ++j;
            out.append(w);
            out += '#';
            i = j;
            marked = true;
            break;
        }
        if (!marked) out += text[i++];
    }
    return out;
}

// A sentence as its words between numbers and the numbers themselves:
// text.size() == numbers.size() + 1.
struct Tokens {
    std::vector<std::string> text;
    std::vector<std::string> numbers;
};

Tokens tokenize(const std::string& s) {
    Tokens t;
    t.text.emplace_back();
    for (std::size_t i = 0; i < s.size();) {
        const bool digit = s[i] >= '0' && s[i] <= '9';
        // Digits inside a word ("L3", "x10") belong to the word.
        const bool in_word =
            i > 0 && ((s[i - 1] >= 'a' && s[i - 1] <= 'z') || (s[i - 1] >= 'A' && s[i - 1] <= 'Z') || s[i - 1] == '_');
        if (!digit || in_word) {
            t.text.back() += s[i++];
            continue;
        }
        std::size_t j = i;
        while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
        if (j + 1 < s.size() && s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9') {
            ++j;
            while (j < s.size() && s[j] >= '0' && s[j] <= '9') ++j;
        }
        t.numbers.push_back(s.substr(i, j - i));
        t.text.emplace_back();
        i = j;
    }
    return t;
}

// The members' texts (marked) as one: the same words, each number that
// differs written "min–max". Members whose words differ cannot be merged:
// the first member's text stands, said to be that node's.
std::string merge_texts(const std::vector<std::string>& texts) {
    if (texts.empty()) return {};
    // Alike texts (suggestions are, by the key) need no tokens.
    if (std::all_of(texts.begin(), texts.end(), [&](const std::string& t) { return t == texts.front(); }))
        return texts.front();
    std::vector<Tokens> tokens;
    tokens.reserve(texts.size());
    for (const std::string& t : texts) tokens.push_back(tokenize(t));
    const Tokens& first = tokens.front();
    bool alike = true;
    for (const Tokens& t : tokens)
        if (t.text != first.text) {
            alike = false;
            break;
        }
    if (!alike) {
        std::string out = texts.front();
        for (char& c : out)
            if (c == kHostMark) c = '\x03';  // the first member's own host, put back below
        return out + " (figures of \x03)";
    }
    std::string out = first.text[0];
    for (std::size_t i = 0; i < first.numbers.size(); ++i) {
        const std::string* low = &first.numbers[i];
        const std::string* high = low;
        double lo = std::strtod(low->c_str(), nullptr), hi = lo;
        for (const Tokens& t : tokens) {
            const double v = std::strtod(t.numbers[i].c_str(), nullptr);
            if (v < lo) lo = v, low = &t.numbers[i];
            if (v > hi) hi = v, high = &t.numbers[i];
        }
        out += *low == *high ? *low : *low + "\u2013" + *high;
        out += first.text[i + 1];
    }
    return out;
}

// A merged text that names a range of ranks speaks of them in the plural:
// "Rank 0–1 was bound" becomes "Ranks 0–1 were bound".
std::string plural_rank_ranges(const std::string& text) {
    static const std::string kDash = "\u2013";
    std::string out;
    for (std::size_t i = 0; i < text.size();) {
        const bool word_start = i == 0 || !host_char(text[i - 1]);
        const bool rank = word_start && (text.compare(i, 5, "Rank ") == 0 || text.compare(i, 5, "rank ") == 0);
        if (!rank) {
            out += text[i++];
            continue;
        }
        std::size_t j = i + 5;
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
        const bool range = j > i + 5 && text.compare(j, kDash.size(), kDash) == 0;
        if (!range) {
            out.append(text, i, 5);
            i += 5;
            continue;
        }
        j += kDash.size();
        while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
        out.append(text, i, 4);
        out += "s ";
        out.append(text, i + 5, j - i - 5);
        i = j;
        if (text.compare(i, 5, " was ") == 0) {
            out += " were ";
            i += 5;
        }
    }
    return out;
}

std::string unmark(std::string text, const std::string& hosts, const std::string& first_host,
                   const std::string& over_demand) {
    std::string out;
    for (char c : text) {
        if (c == kHostMark) out += hosts;
        else if (c == '\x03') out += first_host;
        else if (c == kOverDemandMark) out += over_demand;
        else out += c;
    }
    return out;
}

std::string remedy_key(const Remedy& r) {
    std::string k = std::to_string(r.processes_per_node) + "/" + std::to_string(r.threads_per_process) + "/" +
                    std::to_string(r.cores_per_process) + "/" + r.launcher;
    for (const std::string& o : r.launcher_options) k += "\x1f" + o;
    for (const auto& [name, value] : r.env) k += "\x1e" + name + "=" + value;
    return k;
}

std::string node_key(const AnalysisResult& a, const NodeSummary& n, const std::vector<std::size_t>& findings) {
    std::string k = std::to_string(n.cores_available) + "|" + std::to_string(n.cpus_available) + "|" +
                    std::to_string(n.cpus_total) + "|" + n.available.to_list_string() + "|" +
                    (n.job_restricted ? "r" : "-") + (n.smt ? "s" : "-") + "|" + std::string(to_string(n.topology_source)) + "|" +
                    std::to_string(n.processes.size()) + "|";
    std::vector<std::string> launchers;
    for (std::size_t p : n.launchers) launchers.push_back(a.processes[p].name);
    std::sort(launchers.begin(), launchers.end());
    for (const std::string& l : launchers) k += l + ",";
    for (std::size_t i : findings) {
        const Finding& f = a.findings[i];
        // The advice must fit every node of the group: the remedy as data,
        // and the suggestion's words and numbers too (its alternatives are
        // not in the remedy), the node's own name aside.
        k += "\n" + std::string(to_string(f.code)) + "|" + std::string(to_string(f.severity)) + "|" + f.check + "|" +
             f.resources.to_list_string() + "|" + remedy_key(f.remedy) + "|" + mark_ids(mark_host(f.suggestion, n.host));
    }
    return k;
}

GroupFinding merge_findings(const AnalysisResult& a, const NodeGroup& group,
                            const std::vector<std::vector<std::size_t>>& node_findings, std::size_t slot) {
    GroupFinding g;
    std::vector<const Finding*> members;
    for (std::size_t n : group.nodes) {
        g.findings.push_back(node_findings[n][slot]);
        members.push_back(&a.findings[node_findings[n][slot]]);
    }
    const Finding& first = *members.front();
    g.code = first.code;
    g.severity = first.severity;
    g.check = first.check;
    g.resources = first.resources;
    g.flow_count_min = g.flow_count_max = first.flow_count;
    for (const Finding* f : members) {
        g.flow_count_min = std::min(g.flow_count_min, f->flow_count);
        g.flow_count_max = std::max(g.flow_count_max, f->flow_count);
        for (const auto& [name, value] : f->figures) {
            auto it =
                std::find_if(g.figures.begin(), g.figures.end(), [&](const FigureRange& r) { return r.name == name; });
            if (it == g.figures.end()) g.figures.push_back({name, value, value});
            else it->min = std::min(it->min, value), it->max = std::max(it->max, value);
        }
    }
    if (members.size() == 1) {
        g.message = first.message;
        g.detail = first.detail;
        g.suggestion = first.suggestion;
        return g;
    }
    // The over-demand phrase differs in words between nodes ("the whole run"
    // against "99 % of the run"): it is written for the group from the loads.
    std::string over_demand;
    std::vector<std::string> messages, details, suggestions;
    std::vector<const NodeLoad*> loads;
    for (std::size_t k = 0; k < members.size(); ++k) {
        const std::size_t n = group.nodes[k];
        const std::string& host = a.nodes[n].host;
        std::string message = members[k]->message;
        if (g.code == FindingCode::OverloadedResources && n < a.loads.size()) {
            const std::string phrase = describe_over_demand(a.loads[n]);
            if (const std::size_t at = phrase.empty() ? std::string::npos : message.find(phrase);
                at != std::string::npos)
                message.replace(at, phrase.size(), std::string(1, kOverDemandMark));
            loads.push_back(&a.loads[n]);
        }
        messages.push_back(mark_host(message, host));
        details.push_back(mark_host(members[k]->detail, host));
        suggestions.push_back(mark_host(members[k]->suggestion, host));
    }
    if (loads.size() == members.size()) over_demand = describe_over_demand_range(loads);
    const std::string& first_host = a.nodes[group.nodes.front()].host;
    g.message = unmark(plural_rank_ranges(merge_texts(messages)), group.hosts, first_host, over_demand);
    g.detail = unmark(plural_rank_ranges(merge_texts(details)), group.hosts, first_host, over_demand);
    g.suggestion = unmark(plural_rank_ranges(merge_texts(suggestions)), group.hosts, first_host, over_demand);
    return g;
}

}  // namespace

std::vector<NodeGroup> group_nodes(const AnalysisResult& a) {
    std::map<std::string, std::size_t> node_of_host;
    for (std::size_t n = 0; n < a.nodes.size(); ++n) node_of_host.emplace(a.nodes[n].host, n);
    std::vector<std::vector<std::size_t>> node_findings(a.nodes.size());
    for (std::size_t i = 0; i < a.findings.size(); ++i) {
        const auto it = node_of_host.find(a.findings[i].node);
        if (it != node_of_host.end()) node_findings[it->second].push_back(i);
    }
    std::vector<NodeGroup> groups;
    std::map<std::string, std::size_t> group_of_key;
    for (std::size_t n = 0; n < a.nodes.size(); ++n) {
        const auto [it, added] = group_of_key.emplace(node_key(a, a.nodes[n], node_findings[n]), groups.size());
        if (added) groups.emplace_back();
        groups[it->second].nodes.push_back(n);
    }
    for (NodeGroup& g : groups) {
        std::vector<std::string> hosts;
        hosts.reserve(g.nodes.size());
        for (std::size_t n : g.nodes) hosts.push_back(a.nodes[n].host);
        g.hosts = format_hostlist(std::move(hosts));
        const std::vector<std::size_t>& first = node_findings[g.nodes.front()];
        for (std::size_t slot = 0; slot < first.size(); ++slot) {
            g.findings.push_back(merge_findings(a, g, node_findings, slot));
            const Severity s = g.findings.back().severity;
            if (!g.worst_severity || s > *g.worst_severity) g.worst_severity = s;
        }
    }
    auto rank = [](const NodeGroup& g) { return g.worst_severity ? static_cast<int>(*g.worst_severity) : -1; };
    std::stable_sort(groups.begin(), groups.end(), [&](const NodeGroup& x, const NodeGroup& y) {
        if (rank(x) != rank(y)) return rank(x) > rank(y);
        if (x.nodes.size() != y.nodes.size()) return x.nodes.size() < y.nodes.size();
        return x.nodes.front() < y.nodes.front();
    });
    return groups;
}

}  // namespace stacksage
