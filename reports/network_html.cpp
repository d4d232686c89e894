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

namespace {

// Which switches are drawn where, and what the job uses.
struct FabricDrawing {
    std::vector<bool> crossed, used_leaf, link_crossed;
    std::map<std::uint32_t, std::size_t> job_nodes;  // leaf switch -> the job's nodes below it
    bool all = true;                                 // every switch drawn
    // Rows: the top level first, leaves last; switches no leaf reaches on a row of their own (1000).
    std::map<int, std::vector<std::uint32_t>, std::greater<>> rows;
    std::vector<int> x, y;
    int width = 0, height = 0;
};

FabricDrawing lay_out(const Fabric& f, const NetworkFootprint& fp) {
    FabricDrawing d;
    d.crossed.assign(f.nodes().size(), false);
    d.used_leaf.assign(f.nodes().size(), false);
    d.link_crossed.assign(f.links().size(), false);
    for (std::uint32_t s : fp.switches_crossed) d.crossed[s] = true;
    for (std::uint32_t l : fp.links_crossed) d.link_crossed[l] = true;
    for (const LeafUse& l : fp.leaves_used) {
        d.used_leaf[l.switch_node] = true;
        d.job_nodes[l.switch_node] = l.job_nodes;
    }
    d.all = f.count(FabricNodeKind::Switch) <= kMaxDrawnSwitches;
    for (std::uint32_t i = 0; i < f.nodes().size(); ++i) {
        if (f.nodes()[i].kind != FabricNodeKind::Switch) continue;
        if (!d.all && !d.crossed[i] && !d.used_leaf[i]) continue;
        d.rows[fp.level[i] == 0 ? 1000 : fp.level[i]].push_back(i);
    }
    std::size_t widest = 1;
    for (auto& [level, row] : d.rows) {
        // The job's switches first, so that they are seen without scrolling.
        std::stable_sort(row.begin(), row.end(),
                         [&](std::uint32_t a, std::uint32_t b) { return d.crossed[a] > d.crossed[b]; });
        widest = std::max(widest, row.size());
    }
    d.width = kMargin * 2 + static_cast<int>(widest) * (kBox + kGap) + 120;
    d.height = kMargin * 2 + static_cast<int>(d.rows.size()) * kRow;
    d.x.assign(f.nodes().size(), -1);
    d.y.assign(f.nodes().size(), -1);
    int r_index = 0;
    for (const auto& [level, row] : d.rows) {
        for (std::size_t i = 0; i < row.size(); ++i) {
            d.x[row[i]] = kMargin + 120 + static_cast<int>(i) * (kBox + kGap);
            d.y[row[i]] = kMargin + r_index * kRow;
        }
        ++r_index;
    }
    return d;
}

std::string draw_svg(const Fabric& f, const FabricDrawing& d) {
    std::string svg = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"the fabric's "
        "switches by level\" style=\"font:11px sans-serif\">\n",
        d.width, d.height);
    int r_index = 0;
    for (const auto& [level, row] : d.rows) {
        svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", kMargin, kMargin + r_index * kRow + kBox - 2,
                           level == 1000 ? std::string("no host below")
                                         : (level == 1 ? "level 1 (leaves)" : "level " + std::to_string(level)));
        ++r_index;
    }
    // Cables between drawn switches; the job's in red, on top.
    std::string job_lines;
    for (std::uint32_t i = 0; i < f.links().size(); ++i) {
        const FabricLink& l = f.links()[i];
        if (d.x[l.a] < 0 || d.x[l.b] < 0) continue;
        const std::string line = fmt::format(
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"/>\n", d.x[l.a] + kBox / 2,
            d.y[l.a] + kBox / 2, d.x[l.b] + kBox / 2, d.y[l.b] + kBox / 2, d.link_crossed[i] ? "#d62728" : "#c8c8c8",
            d.link_crossed[i] ? 2 : 1);
        (d.link_crossed[i] ? job_lines : svg) += line;
    }
    svg += job_lines;
    for (const auto& [level, row] : d.rows)
        for (std::uint32_t s : row) {
            const std::string fill = d.used_leaf[s] ? "#d62728" : d.crossed[s] ? "#ff9896" : "#9ecae1";
            std::string title = switch_label(f, s) + " (" + format_guid(f.nodes()[s].guid) + ")";
            if (d.used_leaf[s]) title += ": " + counted(d.job_nodes.at(s), "node") + " of the job";
            svg += fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#444\"><title>{}</title></rect>\n",
                d.x[s], d.y[s], kBox, kBox, fill, html_escape(title));
            if (d.used_leaf[s])
                svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", d.x[s] + kBox / 2,
                                   d.y[s] + kBox + 12, d.job_nodes.at(s));
        }
    svg += "</svg>\n";
    return svg;
}

// The line above the drawing: the fabric's size, the job's place, the legend.
std::string summary_line(const NetworkReport& r, bool all) {
    const Fabric& f = *r.fabric;
    const NetworkFootprint& fp = *r.footprint;
    return r.source + ": " + counted(f.count(FabricNodeKind::Switch), "switch") + " in " + counted(fp.levels, "level") +
           ", " + counted(f.count(FabricNodeKind::Adapter), "adapter") + ", " + counted(f.links().size(), "cable") +
           ". The job's " + counted(fp.nodes, "node") + (fp.nodes == 1 ? " hangs from " : " hang from ") +
           counted(fp.leaves_used.size(), "leaf switch") +
           (fp.capacity_known ? " (" + std::to_string(fp.leaves_needed) + " could hold them)" : "") +
           "; dark red: its leaf switches (with its node count), pink: switches its shortest paths cross, "
           "red lines: its cables." +
           (all ? "" : " Only the job's switches are drawn: the fabric has more than " +
                           std::to_string(kMaxDrawnSwitches) + ".");
}

// Pairs of the job's nodes by hop count, shortest and as routed.
std::string hop_table(const NetworkFootprint& fp) {
    if (fp.pairs() == 0) return "<div class=\"muted\">No pair of the job's nodes is on the fabric.</div>\n";
    const bool routed = !fp.routed_hop_pairs.empty();
    std::string out = "<table><tr><th>hops</th><th>pairs (shortest)</th>";
    out += std::string(routed ? "<th>pairs (forwarding tables)</th>" : "") + "</tr>\n";
    const std::size_t rows_n = std::max(fp.hop_pairs.size(), fp.routed_hop_pairs.size());
    for (std::size_t h = 0; h < rows_n; ++h) {
        const std::uint64_t s = h < fp.hop_pairs.size() ? fp.hop_pairs[h] : 0;
        const std::uint64_t t = h < fp.routed_hop_pairs.size() ? fp.routed_hop_pairs[h] : 0;
        if (s == 0 && t == 0) continue;
        out += fmt::format("<tr><td>{}</td><td>{}</td>{}</tr>\n", h, s, routed ? fmt::format("<td>{}</td>", t) : "");
    }
    return out + "</table>\n";
}

}  // namespace

std::string render_network_html(const NetworkReport& r) {
    const FabricDrawing drawing = lay_out(*r.fabric, *r.footprint);
    std::string out = "<section id=\"network-section\"><h2>Network</h2>\n<div class=\"muted\">";
    out += html_escape(summary_line(r, drawing.all));
    out += "</div>\n<div class=\"tablewrap\">" + draw_svg(*r.fabric, drawing) + "</div>\n";
    out += hop_table(*r.footprint);
    if (!r.join->unjoined.empty()) {
        out += "<h3>Nodes not placed</h3><ul>\n";
        for (const UnjoinedNode& u : r.join->unjoined) out += "<li>" + html_escape(u.host + ": " + u.reason) + "</li>\n";
        out += "</ul>\n";
    }
    out += "</section>\n";
    return out;
}

}  // namespace stacksage
