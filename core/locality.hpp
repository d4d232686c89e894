// Locality on a Model, after dyloc: hierarchical domain tags and distances in
// the component tree.
//
// A domain tag names a component by its path from the top: "0.1.3" is the 4th
// child of the 2nd child of the first root. Tags are stable for as long as the
// tree is not reshaped, and two components share a tag prefix exactly when
// they share the ancestor that prefix names, so "how close are a and b" can be
// read off their tags without the model.
//
// A model may hold several roots (the hardware tree, the software flows):
// the first component of a tag is the position among Model::roots(), so with
// a single root every tag starts with "0".
#pragma once

#include <string>
#include <string_view>

#include "core/ids.hpp"

namespace stacksage {

class Model;

// The domain tag of a component. Costs a walk along the earlier siblings at
// each level, and a scan of the components to place the root among roots.
//
// \return the tag: "0" for the first root, "0.2" for its third child, ...
// \return "" when id is not a live component.
std::string domain_tag(const Model& model, ComponentId id);

// The component named by a domain tag: the inverse of domain_tag(). Costs a
// walk along the siblings before each position in the tag.
//
// \return the component.
// \return kNoComponent when the tag is malformed (empty, empty or non-numeric
//         parts, signs, spaces, leading zeros as in "0.01") or names no
//         component (a position past the last child or root).
ComponentId find_by_domain_tag(const Model& model, std::string_view tag);

// The deepest component that is an ancestor of both a and b, where a
// component counts as its own ancestor. O(depth).
//
// \return the ancestor: lca(a, a) == a, and lca(a, b) == a when a is an
//         ancestor of b.
// \return kNoComponent when a and b lie in different trees, or when either is
//         not a live component.
ComponentId lowest_common_ancestor(const Model& model, ComponentId a, ComponentId b);

// The number of tree edges on the path between a and b. O(depth).
//
// \return 0 for a == b, 1 between parent and child, 2 between siblings, ...
// \return -1 when a and b lie in different trees, or when either is not a
//         live component.
int hop_distance(const Model& model, ComponentId a, ComponentId b);

}  // namespace stacksage
