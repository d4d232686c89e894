#include "parsers/xml_wellformed.hpp"

#include <string>
#include <vector>

#include "parsers/byte_blocks.hpp"

namespace stacksage {

namespace {

// Byte classes, looked up instead of compared: the scan touches every byte.
struct Tables {
    bool space[256] = {}, name_start[256] = {}, name_char[256] = {}, value_char[256] = {};
    constexpr Tables() {
        for (int c : {' ', '\t', '\n', '\r'}) space[c] = true;
        for (int c = 0; c < 256; ++c) {
            name_start[c] = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == ':' || c >= 0x80;
            name_char[c] = name_start[c] || (c >= '0' && c <= '9') || c == '-' || c == '.';
        }
        for (int c = 0; c < 256; ++c) value_char[c] = c != '"' && c != '\'' && c != '<' && c != '&';
    }
};
static constexpr Tables kTable{};

// Each skip below returns the index of the first byte from `i` that is not
// in its run, or n, and reads no byte past n.
//
// 16 bytes at a time where SSE2 is there (every x86-64): the bytes of names,
// values and indentation are most of a file, and a table lookup per byte was
// most of the check's time. The blocks take the common bytes of a run; the
// table decides from the first byte they do not take, byte by byte.
inline std::size_t skip_by_table(const char* p, std::size_t i, std::size_t n, const bool (&in_run)[256]) {
    while (i < n && in_run[static_cast<unsigned char>(p[i])]) ++i;
    return i;
}

#if STACKSAGE_BYTE_BLOCKS
using byte_blocks::bits_of;
using byte_blocks::Block;
using byte_blocks::either;
using byte_blocks::equal;

// Moves *i over whole blocks whose bytes all belong to the run:
// `block_run(block)` gives the bits of those that certainly do. True when it
// stopped on a byte outside them, false when fewer than 16 bytes remain.
template <typename BlockRun>
inline bool skip_by_blocks(const char* p, std::size_t* i, std::size_t n, BlockRun block_run) {
    for (; *i + 16 <= n; *i += 16) {
        const unsigned run = block_run(byte_blocks::load16(p + *i));
        if (run != 0xffff) {
            *i += static_cast<std::size_t>(__builtin_ctz(~run));
            return true;
        }
    }
    return false;
}
#endif

// First index from i whose byte is not a name byte (XML's NameChar).
inline std::size_t skip_name_bytes(const char* p, std::size_t i, std::size_t n) {
#if STACKSAGE_BYTE_BLOCKS
    // A block stops on the rare name bytes too (upper case, '-', '.', non-ASCII).
    skip_by_blocks(p, &i, n, [](Block v) { return byte_blocks::lower_name_bytes(v, /*digits=*/true); });
#endif
    return skip_by_table(p, i, n, kTable.name_char);
}

// First index from i whose byte is '"', '\'', '<' or '&'.
inline std::size_t find_value_stop(const char* p, std::size_t i, std::size_t n) {
#if STACKSAGE_BYTE_BLOCKS
    const bool stopped = skip_by_blocks(p, &i, n, [](Block v) {
        const Block stop = either(either(equal(v, '"'), equal(v, '\'')), either(equal(v, '<'), equal(v, '&')));
        return ~bits_of(stop) & 0xffffu;
    });
    if (stopped) return i;  // the blocks know every stop byte
#endif
    return skip_by_table(p, i, n, kTable.value_char);
}

// First index from i whose byte is not XML white space. Most runs are one
// space (between attributes) or a line's indentation.
inline std::size_t skip_space_bytes(const char* p, std::size_t i, std::size_t n) {
    if (i < n && p[i] == '\n') ++i;  // a line break, then the indentation
#if STACKSAGE_BYTE_BLOCKS
    skip_by_blocks(p, &i, n, [](Block v) { return bits_of(equal(v, ' ')); });  // tabs: by the table
#endif
    return skip_by_table(p, i, n, kTable.space);
}

class Scanner {
public:
    Scanner(std::string_view text, XmlProblem* problem, const XmlElementCheck& check)
        : s_(text), problem_(problem), check_(check) {}

    bool run() {
        // XML allows no NUL anywhere; hwloc's reader stops at the first one,
        // in the middle of whatever it was reading (found by fuzzing: it
        // then crashes). One fast search over the whole text.
        if (const std::size_t nul = s_.find('\0'); nul != std::string_view::npos) {
            at_ = nul;
            return fail("a NUL byte, which XML does not allow");
        }
        bool seen_root = false;
        while (at_ < s_.size()) {
            if (s_[at_] != '<') {
                if (!text_until_tag()) return false;
                continue;
            }
            if (starts("<?")) {
                if (!skip_past("?>", "processing instruction is not closed")) return false;
            } else if (starts("<!--")) {
                if (!skip_past("-->", "comment is not closed")) return false;
            } else if (starts("<![CDATA[")) {
                if (stack_.empty()) return fail("CDATA outside the root element");
                if (!skip_past("]]>", "CDATA section is not closed")) return false;
            } else if (starts("<!DOCTYPE")) {
                if (seen_root) return fail("DOCTYPE after the root element");
                if (!doctype()) return false;
            } else if (starts("</")) {
                if (!end_tag()) return false;
            } else {
                if (stack_.empty() && seen_root) return fail("a second root element");
                seen_root = true;
                if (!start_tag()) return false;
            }
        }
        if (!stack_.empty()) return fail("element <" + std::string(stack_.back()) + "> is not closed");
        if (!seen_root) return fail("no root element");
        return true;
    }

private:
    bool starts(std::string_view p) const { return s_.substr(at_, p.size()) == p; }
    static bool is_space(char c) { return kTable.space[static_cast<unsigned char>(c)]; }
    static bool is_name_start(char c) { return kTable.name_start[static_cast<unsigned char>(c)]; }
    static bool is_name_char(char c) { return kTable.name_char[static_cast<unsigned char>(c)]; }
    void skip_spaces() {
        // Inside a tag: usually one space, or none.
        if (at_ < s_.size() && s_[at_] == ' ') ++at_;
        if (at_ < s_.size() && is_space(s_[at_])) at_ = skip_space_bytes(s_.data(), at_, s_.size());
    }

    bool fail(std::string what) {
        if (problem_) {
            std::size_t line = 1, col = 1;
            for (std::size_t i = 0; i < at_ && i < s_.size(); ++i) {
                if (s_[i] == '\n') { ++line; col = 1; } else { ++col; }
            }
            *problem_ = XmlProblem{line, col, std::move(what)};
        }
        return false;
    }

    bool skip_past(std::string_view end, const char* unclosed) {
        auto pos = s_.find(end, at_ + 2);
        if (pos == std::string_view::npos) return fail(unclosed);
        at_ = pos + end.size();
        return true;
    }

    // Character data up to the next '<': references must be well formed.
    bool text_until_tag() {
        if (stack_.empty()) {
            // Outside the root only white space is allowed.
            if (!is_space(s_[at_])) return fail("text outside the root element");
            ++at_;
            return true;
        }
        // Most text between tags is a line break and indentation: skipped
        // without a search call.
        const std::size_t after_spaces = skip_space_bytes(s_.data(), at_, s_.size());
        if (after_spaces < s_.size() && s_[after_spaces] == '<') {
            at_ = after_spaces;
            return true;
        }
        std::size_t next_tag = s_.find('<', at_);
        if (next_tag == std::string_view::npos) next_tag = s_.size();
        if (!references_in(at_, next_tag)) return false;
        at_ = next_tag;
        return true;
    }

    // Checks every reference in s_[from, to): searches only that range, so
    // the whole scan stays linear.
    bool references_in(std::size_t from, std::size_t to) {
        const std::string_view range = s_.substr(from, to - from);
        for (auto amp = range.find('&'); amp != std::string_view::npos; amp = range.find('&', at_ - from)) {
            at_ = from + amp;
            if (!reference()) return false;  // moves at_ past the ';'
            if (at_ > to) return fail("reference runs past its value");
        }
        return true;
    }

    // "&name;", "&#123;" or "&#x1F;", at_ on '&'; moves past it.
    bool reference() {
        std::size_t i = at_ + 1;
        if (i < s_.size() && s_[i] == '#') {
            ++i;
            bool hex = i < s_.size() && s_[i] == 'x';
            if (hex) ++i;
            std::size_t digits = 0;
            while (i < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i])) ||
                                     (hex && std::isxdigit(static_cast<unsigned char>(s_[i]))))) {
                ++i;
                ++digits;
            }
            if (digits == 0 || digits > 8) return fail("malformed character reference");
        } else {
            if (i >= s_.size() || !is_name_start(s_[i])) return fail("'&' that does not start a reference");
            while (i < s_.size() && is_name_char(s_[i])) ++i;
        }
        if (i >= s_.size() || s_[i] != ';') return fail("reference not ended by ';'");
        at_ = i + 1;
        return true;
    }

    bool name(std::string_view* out) {
        std::size_t start = at_;
        if (at_ >= s_.size() || !is_name_start(s_[at_])) return fail("a name was expected");
        at_ = skip_name_bytes(s_.data(), at_ + 1, s_.size());
        *out = s_.substr(start, at_ - start);
        return true;
    }

    bool start_tag() {
        const std::size_t tag_start = at_;
        ++at_;  // '<'
        std::string_view tag;
        if (!name(&tag)) return false;
        attributes_.clear();
        // The element is complete: let the caller check what it means.
        auto checked = [&] {
            if (!check_) return true;
            std::string problem = check_(tag, attributes_);
            if (problem.empty()) return true;
            at_ = tag_start;
            return fail(std::move(problem));
        };
        while (true) {
            const std::size_t before = at_;
            skip_spaces();
            if (at_ >= s_.size()) return fail("start tag <" + std::string(tag) + "> is not closed");
            if (s_[at_] == '>') {
                ++at_;
                // Readers that recurse per element (hwloc's does) overflow
                // their stack on deep nesting: 20,000 nested objects crash
                // hwloc 2.9. No real document of ours nests beyond a few
                // dozen levels.
                if (stack_.size() >= kMaxXmlDepth) {
                    at_ = tag_start;
                    return fail("elements nested deeper than " + std::to_string(kMaxXmlDepth) + " levels");
                }
                stack_.push_back(tag);
                return checked();
            }
            if (starts("/>")) {
                at_ += 2;
                return checked();
            }
            if (at_ == before) return fail("attributes must be separated by white space");
            std::string_view attr;
            if (!name(&attr)) return false;
            skip_spaces();
            if (at_ >= s_.size() || s_[at_] != '=') return fail("'=' expected after attribute " + std::string(attr));
            ++at_;
            skip_spaces();
            if (at_ >= s_.size() || (s_[at_] != '"' && s_[at_] != '\'')) return fail("attribute value must be quoted");
            const char quote = s_[at_++];
            const std::size_t value_start = at_;
            // Values are a third of a file's bytes: 16 at a time.
            while (true) {
                at_ = find_value_stop(s_.data(), at_, s_.size());
                if (at_ >= s_.size()) return fail("attribute value is not closed");
                const char c = s_[at_];
                if (c == quote) break;
                if (c == '<') return fail("'<' inside an attribute value");
                if (c == '&') {
                    if (!reference()) return false;
                    continue;
                }
                ++at_;  // the other quote character
            }
            if (check_) attributes_.push_back({attr, s_.substr(value_start, at_ - value_start)});
            ++at_;  // past the closing quote
        }
    }

    bool end_tag() {
        at_ += 2;  // "</"
        std::string_view tag;
        if (!name(&tag)) return false;
        skip_spaces();
        if (at_ >= s_.size() || s_[at_] != '>') return fail("end tag </" + std::string(tag) + "> is not closed");
        ++at_;
        if (stack_.empty()) return fail("end tag </" + std::string(tag) + "> without a start tag");
        if (stack_.back() != tag)
            return fail("end tag </" + std::string(tag) + "> does not match <" + std::string(stack_.back()) + ">");
        stack_.pop_back();
        return true;
    }

    // <!DOCTYPE name ... [internal subset] >
    bool doctype() {
        at_ += 9;
        int brackets = 0;
        while (at_ < s_.size()) {
            const char c = s_[at_++];
            if (c == '[') ++brackets;
            else if (c == ']') --brackets;
            else if (c == '"' || c == '\'') {
                auto end = s_.find(c, at_);
                if (end == std::string_view::npos) return fail("quoted string in DOCTYPE is not closed");
                at_ = end + 1;
            } else if (c == '>' && brackets <= 0) {
                return true;
            }
        }
        return fail("DOCTYPE is not closed");
    }

    std::string_view s_;
    XmlProblem* problem_;
    const XmlElementCheck& check_;
    std::vector<XmlAttribute> attributes_;
    std::size_t at_ = 0;
    std::vector<std::string_view> stack_;
};

}  // namespace

bool is_well_formed_xml(std::string_view text, XmlProblem* problem, const XmlElementCheck& check) {
    return Scanner(text, problem, check).run();
}

}  // namespace stacksage
