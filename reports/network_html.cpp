#include <algorithm>
#include <map>

#include <fmt/core.h>

#include "analysis/network_spread_check.hpp"
#include "core/plural.hpp"
#include "reports/html_report.hpp"
#include "reports/network_report.hpp"

namespace stacksage {

namespace {
// Beyond this many switches only the job's own (and what its paths cross)
// are drawn: a drawing of thousands of boxes tells nobody anything.
constexpr std::size_t kMaxDrawnSwitches = 1500;
constexpr int kBox = 14, kGap = 6, kRow = 70, kMargin = 20;
}  // namespace

std::string render_network_html(const NetworkReport& r) {
    const Fabric& f = *r.fabric;
    const NetworkFootprint& fp = *r.footprint;
    std::vector<bool> crossed(f.nodes().size(), false), used_leaf(f.nodes().size(), false), link_crossed(f.links().size(), false);
    for (std::uint32_t s : fp.switches_crossed) crossed[s] = true;
    for (std::uint32_t l : fp.links_crossed) link_crossed[l] = true;
    std::map<std::uint32_t, std::size_t> job_nodes;
    for (const LeafUse& l : fp.leaves_used) {
        used_leaf[l.switch_node] = true;
        job_nodes[l.switch_node] = l.job_nodes;
    }
    const bool all = f.count(FabricNodeKind::Switch) <= kMaxDrawnSwitches;
    // Rows: the top level first, leaves last; switches no leaf reaches on a row of their own.
    std::map<int, std::vector<std::uint32_t>, std::greater<>> rows;
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i) {
        if (f.nodes()[i].kind != FabricNodeKind::Switch) continue;
        if (!all && !crossed[i] && !used_leaf[i]) continue;
        rows[fp.level[i] == 0 ? 1000 : fp.level[i]].push_back(i);
    }
    std::size_t widest = 1;
    for (auto& [level, row] : rows) {
        // The job's switches first, so that they are seen without scrolling.
        std::stable_sort(row.begin(), row.end(), [&](std::uint32_t a, std::uint32_t b) { return crossed[a] > crossed[b]; });
        widest = std::max(widest, row.size());
    }
    const int width = kMargin * 2 + static_cast<int>(widest) * (kBox + kGap) + 120;
    const int height = kMargin * 2 + static_cast<int>(rows.size()) * kRow;
    std::vector<int> x(f.nodes().size(), -1), y(f.nodes().size(), -1);
    int r_index = 0;
    for (const auto& [level, row] : rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            x[row[i]] = kMargin + 120 + static_cast<int>(i) * (kBox + kGap);
            y[row[i]] = kMargin + r_index * kRow;
        }
        ++r_index;
    }
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"the fabric's "
        "switches by level\" style=\"font:11px sans-serif\">\n",
        width, height);
    r_index = 0;
    for (const auto& [level, row] : rows) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kMargin, kMargin + r_index * kRow + kBox - 2,
                           level == 1000 ? std::string("no host below")
                                         : (level == 1 ? "level 1 (leaves)" : "level " + std::to_string(level)));
        ++r_index;
    }
    // Cables between drawn switches; the job's in red, on top.
    std::string job_lines;
    for (std::uint32_t i = 0; i < f.links().size(); ++i) {
        const FabricLink& l = f.links()[i];
        if (x[l.a] < 0 || x[l.b] < 0) continue;
        const std::string line = fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
                                             x[l.a] + kBox / 2, y[l.a] + kBox / 2, x[l.b] + kBox / 2, y[l.b] + kBox / 2,
                                             link_crossed[i] ? "#d62728" : "#c8c8c8", link_crossed[i] ? 2 : 1);
        (link_crossed[i] ? job_lines : svg) += line;
    }
    svg += job_lines;
    for (const auto& [level, row] : rows)
        for (std::uint32_t s : row) {
            const std::string fill = used_leaf[s] ? "#d62728" : crossed[s] ? "#ff9896" : "#9ecae1";
            std::string title = switch_label(f, s) + " (" + format_guid(f.nodes()[s].guid) + ")";
            if (used_leaf[s]) title += ": " + counted(job_nodes[s], "node") + " of the job";
            svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#444\"><title>{}</title></rect>\n",
                               x[s], y[s], kBox, kBox, fill, html_escape(title));
            if (used_leaf[s])
                svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x[s] + kBox / 2,
                                   y[s] + kBox + 12, job_nodes[s]);
        }
    svg += "</svg>\n";
    std::string out = "<section id=\"network-section\"><h2>Network</h2>\n<div class=\"muted\">";
    out += html_escape(r.source + ": " + counted(f.count(FabricNodeKind::Switch), "switch") + " in " +
                       counted(fp.levels, "level") + ", " + counted(f.count(FabricNodeKind::Adapter), "adapter") + ", " +
                       counted(f.links().size(), "cable") + ". The job's " + counted(fp.nodes, "node") +
                       (fp.nodes == 1 ? " hangs from " : " hang from ") +
                       counted(fp.leaves_used.size(), "leaf switch") +
                       (fp.capacity_known ? " (" + std::to_string(fp.leaves_needed) + " could hold them)" : "") +
                       "; dark red: its leaf switches (with its node count), pink: switches its shortest paths cross, "
                       "red lines: its cables." +
                       (all ? "" : " Only the job's switches are drawn: the fabric has more than " +
                                       std::to_string(kMaxDrawnSwitches) + "."));
    out += "</div>\n<div class=\"tablewrap\">" + svg + "</div>\n";
    if (fp.pairs() == 0) out += "<div class=\"muted\">No pair of the job's nodes is on the fabric.</div>\n";
    else out += "<table><tr><th>hops</th><th>pairs (shortest)</th>";
    const bool routed = !fp.routed_hop_pairs.empty();
    if (fp.pairs() != 0) out += std::string(routed ? "<th>pairs (forwarding tables)</th>" : "") + "</tr>\n";
    const std::size_t rows_n = std::max(fp.hop_pairs.size(), fp.routed_hop_pairs.size());
    for (std::size_t h = 0; h < rows_n; ++h) {
        const std::uint64_t s = h < fp.hop_pairs.size() ? fp.hop_pairs[h] : 0;
        const std::uint64_t t = h < fp.routed_hop_pairs.size() ? fp.routed_hop_pairs[h] : 0;
        if (s == 0 && t == 0) continue;
        out += fmt::format("<tr><td>{}</td><td>{}</td>{}</tr>\n", h, s, routed ? fmt::format("<td>{}</td>", t) : "");
    }
    if (fp.pairs() != 0) out += "</table>\n";
    if (!r.join->unjoined.empty()) {
        out += "<h3>Nodes not placed</h3><ul>\n";
        for (const UnjoinedNode& u : r.join->unjoined) out += "<li>" + html_escape(u.host + ": " + u.reason) + "</li>\n";
        out += "</ul>\n";
    }
    out += "</section>\n";
    return out;
}

}  // namespace stacksage
