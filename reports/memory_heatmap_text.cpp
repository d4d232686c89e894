#include "reports/memory_heatmap_text.hpp"

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
            for (const std::string& b : h.backends) backends += (backends.empty() ? "" : ", ") + b;
            out += fmt::format("Memory accesses on {} ({}, {} samples), {} in topology order ({}):\n", h.host, backends,
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
            }
        }
        if (h.first_touch_samples > 0) {
            std::string per_numa;
            for (const auto& [numa, n] : h.first_touch_per_numa)
                per_numa += fmt::format("{}node {} {:.1f} %", per_numa.empty() ? "" : ", ", numa,
                                        100.0 * static_cast<double>(n) / static_cast<double>(h.first_touch_samples));
            const std::vector<std::uint64_t> cells = fold(h.first_touch_per_pu, o.max_columns);
            const std::uint64_t max = cells.empty() ? 0 : *std::max_element(cells.begin(), cells.end());
            out += fmt::format("First touch on {} (pagefault, {} samples): {}{}\n  by PU  |{}|\n", h.host,
                               thousands(h.first_touch_samples), per_numa.empty() ? "NUMA node unknown" : per_numa,
                               h.first_touch_remote
                                   ? fmt::format(", {:.1f} % placed off the touching PU's node",
                                                 100.0 * static_cast<double>(h.first_touch_remote) /
                                                     static_cast<double>(h.first_touch_samples))
                                   : "",
                               shade_row(cells, max));
        }
        if (!h.papi_misses.empty()) {
            std::string misses;
            for (const auto& [level, n] : h.papi_misses)
                misses += fmt::format("{}{} {}", misses.empty() ? "" : ", ", level, thousands(n));
            out += fmt::format("Cache misses on {} (PAPI): {}\n", h.host, misses);
        }
    }
    return out;
}

}  // namespace stacksage
