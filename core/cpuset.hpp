// Cpuset: a set of processing-unit (PU) OS indices.
//
// Printed the way HPC people read them ("0-7,16-23"); parsed from that list
// form and from hwloc's hexadecimal masks ("0x000000ff,0xffffffff").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace stacksage {

class Cpuset {
public:
    Cpuset() = default;
    static Cpuset from_words(std::span<const std::uint64_t> words);
    static Cpuset range(unsigned first, unsigned last);  // inclusive

    // "0-7,16-23", "3", "" (empty). Whitespace around items is allowed.
    // Returns nullopt on anything else (negative numbers, reversed ranges, junk).
    static std::optional<Cpuset> parse_list(std::string_view text);
    // hwloc's bitmap syntax: comma-separated 32-bit hex words, most
    // significant first, optional "0x" prefixes ("0x00000003,0xffffffff").
    // The infinite form "0xf...f" is refused (it names no finite set).
    static std::optional<Cpuset> parse_hwloc_mask(std::string_view text);
    // Either of the two forms above, chosen by a leading "0x".
    static std::optional<Cpuset> parse(std::string_view text);

    std::string to_list_string() const;   // "0-7,16-23"; "" when empty
    std::string to_hwloc_mask() const;    // "0x000000ff"; "0x0" when empty

    void set(unsigned cpu);
    void clear(unsigned cpu);
    bool contains(unsigned cpu) const;
    bool empty() const;
    unsigned count() const;
    // Lowest member, or nullopt when empty.
    std::optional<unsigned> first() const;
    // Lowest member greater than cpu, or nullopt.
    std::optional<unsigned> next(unsigned cpu) const;
    // One past the highest member (0 when empty).
    unsigned end_index() const;

    bool is_subset_of(const Cpuset& other) const;
    bool intersects(const Cpuset& other) const;

    Cpuset& operator|=(const Cpuset& other);
    Cpuset& operator&=(const Cpuset& other);
    Cpuset& operator-=(const Cpuset& other);  // set difference
    Cpuset& operator^=(const Cpuset& other);
    friend Cpuset operator|(Cpuset a, const Cpuset& b) { return a |= b; }
    friend Cpuset operator&(Cpuset a, const Cpuset& b) { return a &= b; }
    friend Cpuset operator-(Cpuset a, const Cpuset& b) { return a -= b; }
    friend Cpuset operator^(Cpuset a, const Cpuset& b) { return a ^= b; }
    friend bool operator==(const Cpuset& a, const Cpuset& b);

    // Trailing zero words are trimmed, so equal sets have equal words.
    std::span<const std::uint64_t> words() const { return words_; }

    class Iterator {
    public:
        using value_type = unsigned;
        using difference_type = std::ptrdiff_t;
        Iterator() = default;
        Iterator(const Cpuset* set, std::optional<unsigned> at) : set_(set), at_(at) {}
        unsigned operator*() const { return *at_; }
        Iterator& operator++() { at_ = set_->next(*at_); return *this; }
        Iterator operator++(int) { Iterator old = *this; ++*this; return old; }
        bool operator==(const Iterator& o) const { return at_ == o.at_; }
    private:
        const Cpuset* set_ = nullptr;
        std::optional<unsigned> at_;
    };
    Iterator begin() const { return Iterator(this, first()); }
    Iterator end() const { return Iterator(this, std::nullopt); }

private:
    void trim();
    std::vector<std::uint64_t> words_;
};

}  // namespace stacksage
