#include "core/hostlist_format.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

namespace stacksage {

namespace {

// A host name split at its last run of digits.
struct HostName {
    std::string prefix, digits, suffix;
    std::uint64_t number = 0;
    bool numbered = false;
};

HostName split(const std::string& host) {
    HostName h;
    h.prefix = host;
    if (host.find_first_of(",[]") != std::string::npos) return h;
    std::size_t end = host.size();
    while (end > 0 && (host[end - 1] < '0' || host[end - 1] > '9')) --end;
    std::size_t begin = end;
    while (begin > 0 && host[begin - 1] >= '0' && host[begin - 1] <= '9') --begin;
    // 19 digits and more could overflow: such a name stands alone.
    if (begin == end || end - begin > 18) return h;
    h.prefix = host.substr(0, begin);
    h.digits = host.substr(begin, end - begin);
    h.suffix = host.substr(end);
    h.number = std::stoull(h.digits);
    h.numbered = true;
    return h;
}

bool zero_padded(const std::string& digits) { return digits.size() > 1 && digits[0] == '0'; }

// b may follow a in one range: the next number, written alike (the same
// width, or neither padded: 9 and 10).
bool continues(const HostName& a, const HostName& b) {
    if (b.number != a.number + 1) return false;
    return a.digits.size() == b.digits.size() || (!zero_padded(a.digits) && !zero_padded(b.digits));
}

}  // namespace

std::string format_hostlist(std::vector<std::string> hosts) {
    std::sort(hosts.begin(), hosts.end());
    hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
    // (prefix, suffix) -> numbered names; names without a number alone.
    std::map<std::pair<std::string, std::string>, std::vector<HostName>> families;
    std::vector<std::pair<std::string, std::string>> order;  // each entry's sort key and text
    for (const std::string& host : hosts) {
        HostName h = split(host);
        if (!h.numbered) {
            order.emplace_back(host, host);
            continue;
        }
        auto& family = families[{h.prefix, h.suffix}];
        family.push_back(std::move(h));
    }
    for (auto& [key, family] : families) {
        std::sort(family.begin(), family.end(), [](const HostName& a, const HostName& b) {
            const std::size_t wa = a.digits.size(), wb = b.digits.size();
            return std::tie(a.number, wa) < std::tie(b.number, wb);
        });
        if (family.size() == 1) {
            const HostName& h = family.front();
            order.emplace_back(key.first + h.digits + key.second, h.prefix + h.digits + h.suffix);
            continue;
        }
        std::string ranges;
        for (std::size_t i = 0; i < family.size();) {
            std::size_t j = i;
            while (j + 1 < family.size() && continues(family[j], family[j + 1])) ++j;
            if (!ranges.empty()) ranges += ',';
            ranges += family[i].digits;
            if (j > i) ranges += "-" + family[j].digits;
            i = j + 1;
        }
        order.emplace_back(key.first + family.front().digits + key.second, key.first + "[" + ranges + "]" + key.second);
    }
    std::sort(order.begin(), order.end());
    std::string out;
    for (const auto& [sort_key, text] : order) out += (out.empty() ? "" : ",") + text;
    return out;
}

}  // namespace stacksage
