// Summaries of paired, within-round ratios for the overhead benchmarks: the
// median (robust to a round that another program's burst spoiled) and the
// mean with its standard error (how well the rounds resolve the figure).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace stacksage::bench {

inline double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct RatioSummary {
    double median = 0, mean = 0, sem = 0;  // of ratio - 1, in percent
};

inline RatioSummary summarize_ratios(const std::vector<double>& ratios) {
    RatioSummary s;
    if (ratios.empty()) return s;
    double mean = 0;
    for (double r : ratios) mean += r;
    mean /= static_cast<double>(ratios.size());
    double var = 0;
    for (double r : ratios) var += (r - mean) * (r - mean);
    const double n = static_cast<double>(ratios.size());
    s.median = (median_of(ratios) - 1) * 100;
    s.mean = (mean - 1) * 100;
    s.sem = ratios.size() > 1 ? std::sqrt(var / (n - 1)) / std::sqrt(n) * 100 : 0;
    return s;
}

// "median +1.23 %, mean +1.40 % +- 0.52 %"
inline void print_ratio_summary(const RatioSummary& s) {
    std::printf("median %+.2f %%, mean %+.2f %% +- %.2f %%", s.median, s.mean, s.sem);
}

}  // namespace stacksage::bench
