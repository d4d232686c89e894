// The characters XML and HTML reserve, written as entities: one table for
// the GraphML export (xml_escape) and the HTML page (html_escape).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace stacksage {

// Appends the entity of `c` when markup reserves it ("&amp;" for '&') and
// says whether it did. `apostrophe` is the caller's entity for '\'':
// "&apos;" in XML, "&#39;" in HTML (HTML 4 has no &apos;).
inline bool append_markup_entity(std::string& out, std::uint32_t c, std::string_view apostrophe) {
    switch (c) {
        case '&': out += "&amp;"; return true;
        case '<': out += "&lt;"; return true;
        case '>': out += "&gt;"; return true;
        case '"': out += "&quot;"; return true;
        case '\'': out += apostrophe; return true;
        default: return false;
    }
}

}  // namespace stacksage
