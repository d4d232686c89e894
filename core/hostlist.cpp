#include "core/hostlist.hpp"

#include <cstdint>

namespace stacksage {

namespace {

// Numbers in a range: at most 18 digits, so that hi - lo + 1 fits.
constexpr std::size_t kMaxDigits = 18;

class HostlistParser {
public:
    HostlistParser(std::string_view list, std::size_t max_hosts) : list_(list), max_hosts_(max_hosts) {}

    Result<std::vector<std::string>> parse() {
        if (list_.empty()) return fail(0, "it is empty");
        std::size_t start = 0;
        int depth = 0;
        for (std::size_t i = 0; i <= list_.size(); ++i) {
            const char c = i < list_.size() ? list_[i] : ',';
            if (c == '[') {
                if (depth > 0) return fail(i, "a bracket opens inside another; brackets do not nest");
                depth = 1;
            } else if (c == ']') {
                if (depth == 0) return fail(i, "']' closes no bracket");
                depth = 0;
            } else if (c == ',' && depth == 0) {
                if (i == start) return fail(i, "a host name is empty (two commas, or a comma at an end)");
                if (!add_host(start, i)) return Error{error_};
                start = i + 1;
            }
        }
        if (depth != 0) return fail(list_.size(), "a '[' is never closed");
        return std::move(hosts_);
    }

private:
    Error fail(std::size_t at, const std::string& what) {
        error_ = "host list \"" + std::string(list_.substr(0, 200)) + (list_.size() > 200 ? "..." : "") +
                 "\" cannot be read: " + what + " (at character " + std::to_string(at + 1) +
                 "); write it as Slurm does, e.g. \"n[001-004,7],gpu1\"";
        return Error{error_};
    }

    // One host expression list_[begin, end): text and bracket groups.
    bool add_host(std::size_t begin, std::size_t end) {
        std::vector<std::vector<std::string>> parts;  // each: the choices at that place
        std::size_t count = 1;
        for (std::size_t i = begin; i < end;) {
            if (list_[i] != '[') {
                std::size_t j = i;
                while (j < end && list_[j] != '[') ++j;
                for (std::size_t k = i; k < j; ++k)
                    if (!valid_name_char(list_[k])) {
                        fail(k, "'" + std::string(1, list_[k]) + "' does not belong in a host name");
                        return false;
                    }
                parts.push_back({std::string(list_.substr(i, j - i))});
                i = j;
                continue;
            }
            const std::size_t close = list_.find(']', i);  // parse() checked it is there, before end
            std::vector<std::string> choices;
            if (!expand_group(i + 1, close, choices)) return false;
            if (choices.size() > max_hosts_ / count) {
                too_many(begin);
                return false;
            }
            count *= choices.size();
            parts.push_back(std::move(choices));
            i = close + 1;
        }
        if (count > max_hosts_ - hosts_.size()) {
            too_many(begin);
            return false;
        }
        // The product, the last group varying fastest (Slurm's order).
        std::vector<std::size_t> pick(parts.size(), 0);
        for (std::size_t n = 0; n < count; ++n) {
            std::string host;
            for (std::size_t p = 0; p < parts.size(); ++p) host += parts[p][pick[p]];
            hosts_.push_back(std::move(host));
            for (std::size_t p = parts.size(); p-- > 0;) {
                if (++pick[p] < parts[p].size()) break;
                pick[p] = 0;
            }
        }
        return true;
    }

    void too_many(std::size_t at) {
        fail(at, "it names more than " + std::to_string(max_hosts_) + " hosts, more than any machine has");
    }

    static bool valid_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
               c == '.';
    }

    // The numbers of a bracket group list_[begin, end): "001-003,7".
    bool expand_group(std::size_t begin, std::size_t end, std::vector<std::string>& out) {
        if (begin == end) {
            fail(begin, "a bracket holds no number");
            return false;
        }
        std::size_t i = begin;
        while (i <= end) {
            std::size_t j = i;
            while (j < end && list_[j] != ',') ++j;
            if (!expand_range(i, j, out)) return false;
            i = j + 1;
        }
        return true;
    }

    bool read_number(std::size_t begin, std::size_t end, std::uint64_t& value) {
        if (begin == end) {
            fail(begin, "a number is missing in a bracket");
            return false;
        }
        if (end - begin > kMaxDigits) {
            fail(begin, "a number has more than " + std::to_string(kMaxDigits) + " digits");
            return false;
        }
        value = 0;
        for (std::size_t k = begin; k < end; ++k) {
            if (list_[k] < '0' || list_[k] > '9') {
                fail(k, "'" + std::string(1, list_[k]) +
                            "' in a bracket is no digit; brackets hold numbers and "
                            "ranges such as 1-4");
                return false;
            }
            value = value * 10 + static_cast<std::uint64_t>(list_[k] - '0');
        }
        return true;
    }

    // "7" or "001-003" at list_[begin, end).
    bool expand_range(std::size_t begin, std::size_t end, std::vector<std::string>& out) {
        const std::string_view text = list_.substr(begin, end - begin);
        const std::size_t dash = text.find('-');
        const std::size_t lo_end = dash == std::string_view::npos ? end : begin + dash;
        std::uint64_t lo = 0, hi = 0;
        if (!read_number(begin, lo_end, lo)) return false;
        hi = lo;
        if (dash != std::string_view::npos && !read_number(lo_end + 1, end, hi)) return false;
        if (hi < lo) {
            fail(begin, "the range " + std::string(text) + " runs backwards; write the lower number first");
            return false;
        }
        if (hi - lo >= max_hosts_ - std::min(max_hosts_, out.size())) {
            too_many(begin);
            return false;
        }
        const std::size_t width = lo_end - begin;  // the lower bound's digits: its zero padding
        for (std::uint64_t n = lo;; ++n) {
            std::string digits = std::to_string(n);
            if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
            out.push_back(std::move(digits));
            if (n == hi) break;
        }
        return true;
    }

    std::string_view list_;
    std::size_t max_hosts_;
    std::vector<std::string> hosts_;
    std::string error_;
};

}  // namespace

Result<std::vector<std::string>> parse_hostlist(std::string_view list, std::size_t max_hosts) {
    return HostlistParser(list, max_hosts).parse();
}

}  // namespace stacksage
