#include "core/cpuset.hpp"

#include <bit>
#include <charconv>
#include <fmt/format.h>

namespace stacksage {

namespace {
constexpr unsigned kBits = 64;

std::string_view trim_spaces(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n')) s.remove_suffix(1);
    return s;
}

std::optional<unsigned> parse_unsigned(std::string_view s) {
    s = trim_spaces(s);
    if (s.empty()) return std::nullopt;
    unsigned value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return value;
}

// Larger sets than this are refused: no machine has 2^20 PUs, and a typo must
// not allocate gigabytes.
constexpr unsigned kMaxCpu = 1u << 20;
}  // namespace

Cpuset Cpuset::from_words(std::span<const std::uint64_t> words) {
    Cpuset c;
    c.words_.assign(words.begin(), words.end());
    c.trim();
    return c;
}

Cpuset Cpuset::range(unsigned first, unsigned last) {
    Cpuset c;
    if (first > last) return c;
    c.words_.assign(last / kBits + 1, 0);
    for (unsigned w = first / kBits; w <= last / kBits; ++w) {
        unsigned lo = (w == first / kBits) ? first % kBits : 0;
        unsigned hi = (w == last / kBits) ? last % kBits : kBits - 1;
        std::uint64_t mask = (hi == 63 ? ~0ull : ((1ull << (hi + 1)) - 1)) & ~((1ull << lo) - 1);
        c.words_[w] |= mask;
    }
    return c;
}

std::optional<Cpuset> Cpuset::parse_list(std::string_view text) {
    Cpuset c;
    text = trim_spaces(text);
    if (text.empty()) return c;
    while (true) {
        auto comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        auto dash = item.find('-');
        if (dash == std::string_view::npos) {
            auto v = parse_unsigned(item);
            if (!v || *v >= kMaxCpu) return std::nullopt;
            c.set(*v);
        } else {
            auto lo = parse_unsigned(item.substr(0, dash));
            auto hi = parse_unsigned(item.substr(dash + 1));
            if (!lo || !hi || *lo > *hi || *hi >= kMaxCpu) return std::nullopt;
            c |= range(*lo, *hi);
        }
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    return c;
}

std::optional<Cpuset> Cpuset::parse_hwloc_mask(std::string_view text) {
    text = trim_spaces(text);
    if (text.empty()) return std::nullopt;
    if (text.find("f...f") != std::string_view::npos) return std::nullopt;  // infinite set
    // Split into 32-bit words, most significant first.
    std::vector<std::uint32_t> words32;
    while (true) {
        auto comma = text.find(',');
        std::string_view item = trim_spaces(text.substr(0, comma));
        if (item.starts_with("0x") || item.starts_with("0X")) item.remove_prefix(2);
        // hwloc writes an all-zero word as nothing: "0x1,,0x0".
        if (item.empty() && comma == std::string_view::npos) return std::nullopt;
        if (item.empty()) item = "0";
        // A single word may be longer than 8 digits ("0xffffffffff"): split it.
        std::vector<std::uint32_t> pieces;
        while (!item.empty()) {
            std::size_t take = item.size() % 8 == 0 ? 8 : item.size() % 8;
            std::uint32_t v = 0;
            auto [end, ec] = std::from_chars(item.data(), item.data() + take, v, 16);
            if (ec != std::errc() || end != item.data() + take) return std::nullopt;
            pieces.push_back(v);
            item.remove_prefix(take);
        }
        words32.insert(words32.end(), pieces.begin(), pieces.end());
        if (comma == std::string_view::npos) break;
        text.remove_prefix(comma + 1);
    }
    if (words32.size() * 32 > kMaxCpu) return std::nullopt;
    Cpuset c;
    c.words_.assign((words32.size() + 1) / 2, 0);
    for (std::size_t i = 0; i < words32.size(); ++i) {
        std::size_t bit_word = words32.size() - 1 - i;  // index of this 32-bit word from the LSB
        c.words_[bit_word / 2] |= static_cast<std::uint64_t>(words32[i]) << (32 * (bit_word % 2));
    }
    c.trim();
    return c;
}

std::optional<Cpuset> Cpuset::parse(std::string_view text) {
    auto t = trim_spaces(text);
    if (t.starts_with("0x") || t.starts_with("0X")) return parse_hwloc_mask(t);
    return parse_list(t);
}

std::string Cpuset::to_list_string() const {
    std::string out;
    auto at = first();
    while (at) {
        unsigned lo = *at, hi = lo;
        auto n = next(hi);
        while (n && *n == hi + 1) { hi = *n; n = next(hi); }
        if (!out.empty()) out += ',';
        if (lo == hi) out += fmt::format("{}", lo);
        else out += fmt::format("{}-{}", lo, hi);
        at = n;
    }
    return out;
}

std::string Cpuset::to_hwloc_mask() const {
    if (words_.empty()) return "0x0";
    std::string out;
    std::size_t n32 = words_.size() * 2;
    // Skip leading zero 32-bit words but keep at least one.
    while (n32 > 1 && ((words_[(n32 - 1) / 2] >> (32 * ((n32 - 1) % 2))) & 0xffffffffu) == 0) --n32;
    for (std::size_t i = n32; i-- > 0;) {
        auto v = static_cast<std::uint32_t>(words_[i / 2] >> (32 * (i % 2)));
        if (!out.empty()) out += ',';
        out += fmt::format("0x{:08x}", v);
    }
    return out;
}

void Cpuset::set(unsigned cpu) {
    if (cpu / kBits >= words_.size()) words_.resize(cpu / kBits + 1, 0);
    words_[cpu / kBits] |= 1ull << (cpu % kBits);
}

void Cpuset::clear(unsigned cpu) {
    if (cpu / kBits >= words_.size()) return;
    words_[cpu / kBits] &= ~(1ull << (cpu % kBits));
    trim();
}

bool Cpuset::contains(unsigned cpu) const {
    return cpu / kBits < words_.size() && (words_[cpu / kBits] >> (cpu % kBits)) & 1u;
}

bool Cpuset::empty() const { return words_.empty(); }

unsigned Cpuset::count() const {
    unsigned n = 0;
    for (auto w : words_) n += static_cast<unsigned>(std::popcount(w));
    return n;
}

std::optional<unsigned> Cpuset::first() const {
    for (std::size_t i = 0; i < words_.size(); ++i)
        if (words_[i]) return static_cast<unsigned>(i * kBits + std::countr_zero(words_[i]));
    return std::nullopt;
}

std::optional<unsigned> Cpuset::next(unsigned cpu) const {
    unsigned start = cpu + 1;
    std::size_t w = start / kBits;
    if (w >= words_.size()) return std::nullopt;
    std::uint64_t bits = (start % kBits) ? words_[w] & ~((1ull << (start % kBits)) - 1) : words_[w];
    while (true) {
        if (bits) return static_cast<unsigned>(w * kBits + std::countr_zero(bits));
        if (++w >= words_.size()) return std::nullopt;
        bits = words_[w];
    }
}

unsigned Cpuset::end_index() const {
    if (words_.empty()) return 0;
    return static_cast<unsigned>((words_.size() - 1) * kBits + (kBits - std::countl_zero(words_.back())));
}

bool Cpuset::is_subset_of(const Cpuset& other) const {
    for (std::size_t i = 0; i < words_.size(); ++i) {
        std::uint64_t o = i < other.words_.size() ? other.words_[i] : 0;
        if (words_[i] & ~o) return false;
    }
    return true;
}

bool Cpuset::intersects(const Cpuset& other) const {
    std::size_t n = std::min(words_.size(), other.words_.size());
    for (std::size_t i = 0; i < n; ++i)
        if (words_[i] & other.words_[i]) return true;
    return false;
}

Cpuset& Cpuset::operator|=(const Cpuset& other) {
    if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
    for (std::size_t i = 0; i < other.words_.size(); ++i) words_[i] |= other.words_[i];
    return *this;
}

Cpuset& Cpuset::operator&=(const Cpuset& other) {
    if (words_.size() > other.words_.size()) words_.resize(other.words_.size());
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] &= other.words_[i];
    trim();
    return *this;
}

Cpuset& Cpuset::operator-=(const Cpuset& other) {
    std::size_t n = std::min(words_.size(), other.words_.size());
    for (std::size_t i = 0; i < n; ++i) words_[i] &= ~other.words_[i];
    trim();
    return *this;
}

Cpuset& Cpuset::operator^=(const Cpuset& other) {
    if (other.words_.size() > words_.size()) words_.resize(other.words_.size(), 0);
    for (std::size_t i = 0; i < other.words_.size(); ++i) words_[i] ^= other.words_[i];
    trim();
    return *this;
}

bool operator==(const Cpuset& a, const Cpuset& b) { return a.words_ == b.words_; }

void Cpuset::trim() {
    while (!words_.empty() && words_.back() == 0) words_.pop_back();
}

}  // namespace stacksage
