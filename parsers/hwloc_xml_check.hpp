// Checking hwloc XML text before libhwloc reads it.
//
// hwloc 2.9's XML reader trusts its input and crashes the process on some
// malformed files; every loader in stacksage runs this check first.
#pragma once

#include <string>
#include <string_view>

#include "core/result.hpp"

namespace stacksage {

// What load_hwloc_xml_text checks before hwloc sees the text, alone: that it
// is an hwloc topology of a readable format version, complete, well-formed,
// and that every <object> has what hwloc 2.9 relies on without checking
// (a type it writes, bitmaps, the four sets, an OS index on PUs and NUMA
// nodes, names its reader can read, a Machine at the root, distance matrices
// the file can hold, nesting at most kMaxXmlDepth deep); hwloc crashes,
// aborts, or allocates gigabytes, otherwise.
//
// \return Ok when hwloc may be given the text.
// \return an Error naming `name`, the line and column, and what to do.
Status check_hwloc_xml_text(std::string_view text, const std::string& name);

}  // namespace stacksage
