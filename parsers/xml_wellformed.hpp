// A strict, fast check that text is well-formed XML, before hwloc reads it.
//
// hwloc's built-in ("minimalistic") XML reader, which we use because it is
// twice as fast as its libxml2 one, trusts its input: on malformed markup
// (an unterminated attribute value, a start tag that never closes) it can
// crash the process (found by our fuzzer, reproduced with hwloc's own
// lstopo). This check runs first and turns such input into an error.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace stacksage {

struct XmlProblem {
    std::size_t line = 0, column = 0;  // 1-based, where the problem was found
    std::string what;                  // e.g. "attribute value is not closed"
};

// Views into the checked text (so a check may look at what lies between).
struct XmlAttribute {
    std::string_view name;
    std::string_view raw_value;  // between the quotes, references not expanded
};

// Called for each start tag with its attributes; returns "" to go on, or
// what is wrong with the element (the scan then fails at that element).
using XmlElementCheck = std::function<std::string(std::string_view tag, std::span<const XmlAttribute> attributes)>;

// Deepest element nesting accepted (see is_well_formed_xml).
inline constexpr std::size_t kMaxXmlDepth = 256;

// Checks that there is no NUL byte, then elements nested at most
// kMaxXmlDepth deep, attributes (quoted
// values, no '<' inside), end tags that match their start tags, one root
// element, comments, processing instructions, CDATA, a DOCTYPE declaration
// and character/entity references; and each element with `check` when given.
// \return true when well-formed; otherwise false with *problem filled in.
bool is_well_formed_xml(std::string_view text, XmlProblem* problem, const XmlElementCheck& check = {});

}  // namespace stacksage
