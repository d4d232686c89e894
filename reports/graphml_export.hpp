// The merged model as GraphML (http://graphml.graphdrawing.org/), as netloc's
// lsnettopo exported networks: every live component is a <node> with its
// type, kind, name, OS index and attributes as <data>; the tree (parent ->
// child, edge_type "child") and every DataPath (edge_type: its type's name,
// with oriented, bandwidth, latency and its attributes) are <edge>s. Keys are
// declared once per attribute name and value kind (long, double, string;
// cpusets as list strings). docs/html-report.md describes the export.
#pragma once

#include <string>

#include "core/model.hpp"

namespace stacksage {

std::string model_to_graphml(const Model& model);

// Text made safe in XML content and attribute values: markup characters
// escaped, invalid UTF-8 and characters XML 1.0 forbids replaced by U+FFFD.
std::string xml_escape(std::string_view text);

}  // namespace stacksage
