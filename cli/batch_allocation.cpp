#include "cli/batch_allocation.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

namespace stacksage::cli {

namespace {

// A host list far beyond any machine is a broken variable, not a job.
constexpr std::size_t kMostHosts = 1'000'000;

// "01-03,07" -> {"01", "02", "03", "07"}, keeping the zero padding.
std::optional<std::vector<std::string>> expand_ranges(const std::string& ranges) {
    std::vector<std::string> out;
    std::size_t at = 0;
    while (at <= ranges.size()) {
        std::size_t comma = ranges.find(',', at);
        if (comma == std::string::npos) comma = ranges.size();
        const std::string item = ranges.substr(at, comma - at);
        const std::size_t dash = item.find('-');
        const std::string first = item.substr(0, dash);
        const std::string last = dash == std::string::npos ? first : item.substr(dash + 1);
        auto digits = [](const std::string& s) {
            return !s.empty() && s.size() < 10 &&
                   std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        };
        if (!digits(first) || !digits(last)) return std::nullopt;
        const long from = std::stol(first), to = std::stol(last);
        if (to < from || static_cast<std::size_t>(to - from) > kMostHosts) return std::nullopt;
        for (long n = from; n <= to; ++n) {
            std::string number = std::to_string(n);
            if (number.size() < first.size()) number.insert(0, first.size() - number.size(), '0');
            out.push_back(number);
        }
        at = comma + 1;
    }
    return out;
}

// One host expression without top-level commas: "r[1-2]-n[01-02]".
bool expand_one(const std::string& expression, std::vector<std::string>& out) {
    const std::size_t open = expression.find('[');
    if (open == std::string::npos) {
        if (expression.find(']') != std::string::npos) return false;
        out.push_back(expression);
        return true;
    }
    const std::size_t close = expression.find(']', open);
    if (close == std::string::npos) return false;
    const auto numbers = expand_ranges(expression.substr(open + 1, close - open - 1));
    if (!numbers) return false;
    const std::string prefix = expression.substr(0, open), rest = expression.substr(close + 1);
    for (const std::string& n : *numbers) {
        if (out.size() > kMostHosts) return false;
        if (!expand_one(prefix + n + rest, out)) return false;
    }
    return true;
}

}  // namespace

std::vector<std::string> expand_slurm_host_list(const std::string& list) {
    std::vector<std::string> hosts;
    int depth = 0;
    std::string expression;
    auto flush = [&] {
        if (expression.empty()) return true;
        const bool ok = expand_one(expression, hosts);
        expression.clear();
        return ok;
    };
    for (char c : list) {
        if (c == '[') ++depth;
        if (c == ']') --depth;
        if (depth < 0 || depth > 1) return {};
        if (c == ',' && depth == 0) {
            if (!flush()) return {};
        } else if (c != ' ') {
            expression += c;
        }
    }
    if (depth != 0 || !flush()) return {};
    std::vector<std::string> unique;
    for (auto& h : hosts)
        if (std::find(unique.begin(), unique.end(), h) == unique.end()) unique.push_back(std::move(h));
    return unique;
}

BatchAllocation batch_allocation(const std::function<const char*(const char*)>& getenv) {
    BatchAllocation allocation;
    if (const char* list = getenv("SLURM_JOB_NODELIST"); list && *list) {
        allocation.source = "SLURM_JOB_NODELIST";
        allocation.hosts = expand_slurm_host_list(list);
        return allocation;
    }
    if (const char* file = getenv("PBS_NODEFILE"); file && *file) {
        allocation.source = "PBS_NODEFILE";
        std::ifstream in(file);
        std::string host;
        while (in >> host)  // one line per slot: each host once
            if (std::find(allocation.hosts.begin(), allocation.hosts.end(), host) == allocation.hosts.end())
                allocation.hosts.push_back(host);
    }
    return allocation;
}

}  // namespace stacksage::cli
