#include "reports/memory_heatmap_text.hpp"
#include "reports/terminal_text.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace stacksage {

namespace {

// Nine shades: a blank for none, then eighths of the row's maximum.
constexpr const char* kShades[] = {"·", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};

std::string thousands(std::uint64_t v) {
    std::string digits = std::to_string(v), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

// Folds values into at most `columns` cells by summing neighbours.
std::vector<std::uint64_t> fold(const std::vector<std::uint64_t>& values, std::size_t columns) {
    if (values.size() <= columns || columns == 0) return values;
    const std::size_t per = (values.size() + columns - 1) / columns;
    std::vector<std::uint64_t> out((values.size() + per - 1) / per, 0);
    for (std::size_t i = 0; i < values.size(); ++i) out[i / per] += values[i];
    return out;
}

std::string shade_row(const std::vector<std::uint64_t>& cells, std::uint64_t max) {
    std::string row;
    for (std::uint64_t v : cells) {
        int s = 0;
        if (v > 0 && max > 0) s = 1 + static_cast<int>((v * 7 + max - 1) / max);  // 1..8, rounded up
        row += kShades[std::min(s, 8)];
    }
    return row;
}

std::string pu_range_label(const NodeMemoryHeatmap& h) {
    if (h.pu_os.empty()) return "no PUs";
    return fmt::format("PUs {}..{}", h.pu_os.front(), h.pu_os.back());
}

std::string percent_of(std::uint64_t part, std::uint64_t whole) {
    return fmt::format("{:.1f} %", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

// Where the first-touched pages went: every NUMA node's share and the share
// whose node is unknown (with why), so that the shares add up to 100 %; then
// what that means for locality, as the analysis decided it.
std::string first_touch_text(const NodeMemoryHeatmap& h) {
    std::string out;
    for (const auto& [numa, n] : h.first_touch_per_numa)
        out += fmt::format("{}node {} {}", out.empty() ? "" : ", ", numa, percent_of(n, h.first_touch_samples));
    if (h.first_touch_unresolved > 0 && h.first_touch_locality != FirstTouchLocality::Unresolved)
        out += fmt::format("{}unresolved {} (pages freed or unmapped before the recorder could look up their NUMA "
                           "node)",
                           out.empty() ? "" : ", ", percent_of(h.first_touch_unresolved, h.first_touch_samples));
    switch (h.first_touch_locality) {
    case FirstTouchLocality::SingleNumaNode:
        out += "; one NUMA node: every page is local, locality cannot be an issue";
        break;
    case FirstTouchLocality::Unresolved:
        out = "NUMA node unknown for every page (the kernel reported none when the recorder asked: pages freed "
              "or unmapped by then, or move_pages not allowed here)";
        break;
    case FirstTouchLocality::PartlyRemote:
        out += fmt::format("; {} placed off the touching PU's node",
                           percent_of(h.first_touch_remote, h.first_touch_samples));
        break;
    case FirstTouchLocality::Local: out += "; every page on the touching PU's node"; break;
    case FirstTouchLocality::None: break;
    }
    return out;
}

// "compute_mesh (mesh.c:120) 80 %, main (mesh.c:140) 20 %": the rows with
// their share of whole.
std::string shares_text(const std::vector<std::pair<const HeatmapCodeRow*, std::uint64_t>>& rows, std::uint64_t whole) {
    std::string out;
    for (const auto& [row, n] : rows)
        out += fmt::format("{}{} {:.0f} %", out.empty() ? "" : ", ", terminal_safe(row->label),
                           100.0 * static_cast<double>(n) / static_cast<double>(whole));
    return out;
}

constexpr std::size_t kTextTopSites = 3;

}  // namespace

std::string render_memory_heatmaps(const std::vector<NodeMemoryHeatmap>& heatmaps, const HeatmapTextOptions& o) {
    std::string out;
    const char* dim = o.color ? "\033[2m" : "";
    const char* reset = o.color ? "\033[0m" : "";
    for (const NodeMemoryHeatmap& h : heatmaps) {
        if (h.access_samples > 0) {
            // Per PU when they fit; else per core; else cores folded in groups.
            bool per_core = h.pus.size() > o.max_columns && !h.cores.empty();
            std::string unit = per_core ? "cores" : "PUs";
            std::string backends;
            for (const std::string& b : h.access_backends) backends += (backends.empty() ? "" : ", ") + b;
            out += fmt::format("Memory accesses on {} ({}, {} samples), {} in topology order ({}):\n", terminal_safe(h.host), backends,
                               thousands(h.access_samples), unit, pu_range_label(h));
            std::size_t width = 0;
            for (const HeatmapLevel& l : h.levels) width = std::max(width, l.level.size());
            for (const HeatmapLevel& l : h.levels) {
                const std::vector<std::uint64_t> cells = fold(per_core ? l.per_core : l.per_pu, o.max_columns);
                const std::uint64_t max = cells.empty() ? 0 : *std::max_element(cells.begin(), cells.end());
                std::string extra;
                if (l.mean_latency >= 0) extra += fmt::format("mean {:.0f} cycles", l.mean_latency);
                if (l.remote > 0)
                    extra += fmt::format("{}{:.0f} % remote", extra.empty() ? "" : ", ",
                                         100.0 * static_cast<double>(l.remote) / static_cast<double>(l.samples));
                if (l.stores > 0)
                    extra += fmt::format("{}{:.0f} % stores", extra.empty() ? "" : ", ",
                                         100.0 * static_cast<double>(l.stores) / static_cast<double>(l.samples));
                out += fmt::format("  {:<{}} {:5.1f} %  |{}|{}{}{}{}\n", l.level, width, 100.0 * l.share,
                                   shade_row(cells, max), extra.empty() ? "" : "  ", dim, extra, reset);
                const std::size_t index = static_cast<std::size_t>(&l - h.levels.data());
                if (const auto top = top_sites_of_level(h, index, kTextTopSites); !top.empty())
                    out += fmt::format("  {:<{}}   {}call sites: {}{}\n", "", width, dim, shares_text(top, l.samples), reset);
            }
        }
        if (h.first_touch_samples > 0) {
            const std::vector<std::uint64_t> cells = fold(h.first_touch_per_pu, o.max_columns);
            const std::uint64_t max = cells.empty() ? 0 : *std::max_element(cells.begin(), cells.end());
            out += fmt::format("First touch on {} (pagefault, {} samples): {}\n  by PU  |{}|\n", terminal_safe(h.host),
                               thousands(h.first_touch_samples), first_touch_text(h), shade_row(cells, max));
            if (const auto top = top_first_touch_sites(h, kTextTopSites); !top.empty())
                out += fmt::format("  call sites: {}\n", shares_text(top, h.first_touch_samples));
        }
        if (!h.objects.empty()) {
            // The data objects with the most samples, and how each was served.
            out += fmt::format("Data objects on {} (most samples first):\n", terminal_safe(h.host));
            for (std::size_t i = 0; i < h.objects.size() && i < kTextTopSites; ++i) {
                const HeatmapCodeRow& o = h.objects[i];
                std::string served;
                for (std::size_t l = 0; l < o.per_level.size() && l < h.levels.size(); ++l)
                    if (o.per_level[l] > 0)
                        served += fmt::format("{}{} {}", served.empty() ? "" : ", ", h.levels[l].level, percent_of(o.per_level[l], o.accesses));
                out += fmt::format("  {}: {} accesses{}{}{}\n", terminal_safe(o.label), thousands(o.accesses),
                                   served.empty() ? "" : " (" + served + ")",
                                   o.first_touch > 0 ? fmt::format(", {} first touches", thousands(o.first_touch)) : "",
                                   "");
            }
        }
        if (!h.papi_misses.empty()) {
            std::string misses;
            for (const auto& [level, n] : h.papi_misses)
                misses += fmt::format("{}{} {}", misses.empty() ? "" : ", ", level, thousands(n));
            out += fmt::format("Cache misses on {} (PAPI): {}\n", terminal_safe(h.host), misses);
        }
    }
    return out;
}

}  // namespace stacksage
